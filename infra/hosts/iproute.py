"""iproute2 (`ip`, `tc`) as the hosts' network is made and changed with it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from infra.hosts.addresses import HostsError

NETNS_DIR = Path("/run/netns")  # where `ip netns add` names a namespace
TIMEOUT_S = 20


def run_tool(*args: str, check: bool = True) -> str:
    """Run an iproute2 command (`ip ...`, `tc ...`); its stdout. HostsError naming the
    command and what it said when it fails (unless check=False)."""
    if shutil.which(args[0]) is None:
        raise HostsError(f"{args[0]} is missing: apt-get install iproute2")
    try:
        done = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise HostsError(f"`{' '.join(args)}` did not finish in {TIMEOUT_S}s") from None
    if check and done.returncode != 0:
        said = (done.stderr or done.stdout).strip() or f"exit {done.returncode}"
        raise HostsError(f"`{' '.join(args)}` failed: {said}")
    return done.stdout


def ip(*args: str, namespace: str | None = None, check: bool = True) -> str:
    """`ip [-n namespace] args...`"""
    return run_tool("ip", *(("-n", namespace) if namespace else ()), *args, check=check)


def existing_namespaces(prefix: str) -> list[str]:
    """The named namespaces whose names start with prefix."""
    try:
        return sorted(p.name for p in NETNS_DIR.iterdir() if p.name.startswith(prefix))
    except FileNotFoundError:
        return []


def namespace_pids(namespace: str) -> list[int]:
    """The processes inside a namespace (`ip netns pids`)."""
    out = ip("netns", "pids", namespace, check=False)
    return sorted(int(p) for p in out.split() if p.isdigit())


def exec_prefix(namespace: str) -> list[str]:
    """The command prefix that runs a program inside a namespace: `ip netns exec` sets the
    namespace and execs the program in place (same pid), so a launcher's pid is the
    program's."""
    return ["ip", "netns", "exec", namespace]
