"""Who holds the table's ZooKeeper lock, as the ZooKeeper server and the kernel see it.

Hudi's ZookeeperBasedLockProvider takes Curator's InterProcessMutex under
`<base_path>/<lock_key>`: every contender makes an ephemeral sequential node there and the
lowest one holds the lock. That node belongs to a ZooKeeper session (its ephemeralOwner);
the server's `cons` names each session's client address, and the kernel's socket table
the process bound to that port. Nothing here is what Hudi says of itself: the node's own
`application_id=...` reads "Unknown" for most of Hudi's transactions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

import psutil
from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from infra.services.zookeeper import four_letter

LOCK_NODE = re.compile(r"-lock-(\d+)$")
# ` /127.0.0.1:41234[1](queued=0,recved=9,sent=9,sid=0x1000165a0e10003,lop=PING,...)`
CONNECTION = re.compile(r"/([\d.]+):(\d+)\[\d+\]\((.*)\)")


@dataclass(frozen=True)
class LockHolder:
    node: str  # the lock node's name under the lock path
    session: int  # the ZooKeeper session that owns it
    port: int | None  # that session's client port (None: the server lists no connection)
    owner: str | None  # the label of the process group bound to that port, if one is


def session_ports(cons: str) -> dict[int, int]:
    """Session id -> client port, from the server's answer to `cons`."""
    ports = {}
    for line in cons.splitlines():
        match = CONNECTION.search(line)
        if match is None:
            continue
        fields = dict(kv.split("=", 1) for kv in match.group(3).split(",") if "=" in kv)
        if "sid" in fields:
            ports[int(fields["sid"], 16)] = int(match.group(2))
    return ports


def group_with_port(port: int, groups: Mapping[str, int]) -> str | None:
    """The label of the process group (by its leader's pid) one of whose processes holds a
    TCP socket on local `port`."""
    for label, leader in groups.items():
        try:
            root = psutil.Process(leader)
            processes = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            continue
        for process in processes:
            try:
                sockets = process.net_connections(kind="tcp")
            except (psutil.NoSuchProcess, psutil.AccessDenied):
                continue
            if any(s.laddr and s.laddr.port == port for s in sockets):
                return label
    return None


class LockHolders:
    """Reads the holder of one Curator lock path on the run's ZooKeeper."""

    def __init__(self, endpoint: str, path: str) -> None:
        host, _, port = endpoint.rpartition(":")
        self.host, self.port, self.path = host, int(port), path
        self.zk = KazooClient(hosts=endpoint, timeout=5.0)
        self.zk.start(timeout=10.0)

    def holder_node(self) -> tuple[str, int] | None:
        """(node, owning session) of the lowest lock node still there, or None."""
        try:
            children = self.zk.get_children(self.path)
        except NoNodeError:
            return None
        numbered = [(int(m.group(1)), c) for c in children if (m := LOCK_NODE.search(c))]
        for _, node in sorted(numbered):
            stat = self.zk.exists(f"{self.path}/{node}")
            if stat is not None:
                return node, int(stat.ephemeralOwner)
        return None

    def holder(self, groups: Mapping[str, int]) -> LockHolder | None:
        """The holder now, with the process group it belongs to (`groups`: label -> the
        leader's pid)."""
        held = self.holder_node()
        if held is None:
            return None
        node, session = held
        cons = four_letter(self.host, self.port, b"cons").decode(errors="replace")
        port = session_ports(cons).get(session)
        owner = None if port is None else group_with_port(port, groups)
        return LockHolder(node, session, port, owner)

    def exists(self, node: str) -> bool:
        return self.zk.exists(f"{self.path}/{node}") is not None

    def close(self) -> None:
        self.zk.stop()
        self.zk.close()
