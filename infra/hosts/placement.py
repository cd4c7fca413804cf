"""Where a process runs: the address it binds and the command prefix that starts it there.
A service (the object store, ZooKeeper) or the pipeline driver takes a Placement; the
default is this machine's loopback, a host of a run's network is the other kind."""

from __future__ import annotations

import contextlib
import socket
from dataclasses import dataclass

from infra.hosts.enter import inside
from infra.hosts.iproute import exec_prefix


@dataclass(frozen=True)
class Placement:
    address: str = "127.0.0.1"
    namespace: str | None = None  # None: the caller's own network (loopback)

    @property
    def launcher(self) -> list[str]:
        """What the process's command line starts with."""
        return exec_prefix(self.namespace) if self.namespace else []

    def free_port(self) -> int:
        """A port nothing listens on at this address (asked where the address is)."""
        where = inside(self.namespace) if self.namespace else contextlib.nullcontext()
        with where, socket.socket() as s:
            s.bind((self.address, 0))
            return int(s.getsockname()[1])


LOOPBACK = Placement()
