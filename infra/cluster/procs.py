"""Process helpers for the standalone backend (Linux /proc)."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path


def proc_state(pid: int) -> str | None:
    """The one-letter state of a process (R, S, T, Z, ...), or None if there is none."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat[stat.rindex(")") + 2 :].split()[0]


def alive(pid: int | None) -> bool:
    """True while the process or any of its threads still runs. A zombie group leader
    whose other threads are still exiting (a JVM after SIGKILL) still holds its sockets
    and files, so it counts as alive until it is the last thread."""
    state = None if pid is None else proc_state(pid)
    if state is None:
        return False
    if state not in ("Z", "X"):
        return True
    try:
        return len(os.listdir(f"/proc/{pid}/task")) > 1
    except OSError:
        return False


def proc_env(pid: int) -> dict[str, str]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    env = {}
    for item in raw.split(b"\0"):
        key, sep, value = item.partition(b"=")
        if sep:
            env[key.decode(errors="replace")] = value.decode(errors="replace")
    return env


def pids_with_env(key: str, value: str | None = None) -> list[int]:
    """Processes whose environment has key (= value): everything a cluster started,
    including executors and Python workers, which inherit it."""
    found = []
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        env = proc_env(int(entry))
        if key in env and (value is None or env[key] == value) and alive(int(entry)):
            found.append(int(entry))
    return sorted(found)


def process_group(pgid: int) -> list[int]:
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[2]) == pgid:
            members.append(int(entry))
    return sorted(members)


def signal_group(pgid: int, sig: int) -> bool:
    try:
        os.killpg(pgid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def signal_pids(pids: list[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def wait_gone(pids: list[int], timeout_s: float) -> list[int]:
    """Wait until none of pids is alive (zombies count as gone); return the survivors."""
    deadline = time.monotonic() + timeout_s
    left = [p for p in pids if alive(p)]
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = [p for p in left if alive(p)]
    return left


def terminate(pids: list[int], grace_s: float = 5.0) -> None:
    """SIGCONT (a paused process cannot act on SIGTERM), SIGTERM, then SIGKILL."""
    signal_pids(pids, signal.SIGCONT)
    signal_pids(pids, signal.SIGTERM)
    left = wait_gone(pids, grace_s)
    if left:
        signal_pids(left, signal.SIGKILL)
        wait_gone(left, 5.0)


def wait_ports_free(addresses: list[tuple[str, int]], timeout_s: float = 10.0) -> list:
    """Wait until nothing listens on any of addresses; return those still taken."""
    import socket

    def taken(addr: tuple[str, int]) -> bool:
        with socket.socket() as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                s.bind(addr)
            except OSError:
                return True
        return False

    deadline = time.monotonic() + timeout_s
    left = [a for a in addresses if taken(a)]
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = [a for a in left if taken(a)]
    return left


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    with contextlib.suppress(OSError):
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if link.startswith("socket:["):
                    inodes.add(link[8:-1])
    return inodes


def _address_of(hex_address: str) -> str:
    """/proc/net/tcp{,6}'s local address (host byte order, 4-byte words) as text."""
    import socket

    raw = bytes.fromhex(hex_address)
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    if len(words) == 4:
        return socket.inet_ntop(socket.AF_INET, words)
    text = socket.inet_ntop(socket.AF_INET6, words)
    return text.removeprefix("::ffff:")  # a JVM's IPv6 socket on an IPv4 address


def listens_on(pid: int, host: str, port: int) -> bool:
    """Whether process `pid` itself holds the listening socket on host:port. A server
    started on a probed free port checks this before it counts as up: if another process
    took the port between probe and bind, the answer on that port is the other's. Read
    from the process's own /proc/<pid>/net (its network namespace's sockets: a server on
    a host of a run's network is not in this process's)."""
    inodes = _socket_inodes(pid)
    for table in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            address, _, hex_port = fields[1].rpartition(":")
            listening = fields[3] == "0A"  # TCP_LISTEN
            ours = listening and fields[9] in inodes and int(hex_port, 16) == port
            if ours and _address_of(address) == host:
                return True
    return False
