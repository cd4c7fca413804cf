"""Every lock provider under the same tests: a real ZooKeeper started once per test
session (no mock), and a rig that makes locks of one provider on one table.

Expiry is forced, never waited for by luck: a paused holder renews nothing
(`suspend_renewal`); the storage-backed providers' waiters judge expiry on a stepping
clock (each look is a lease later), the lock service on its own stepping clock, and
ZooKeeper on the server's clock with a short session (the waiter just waits for it)."""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from engine.locks.file import FileLock
from engine.locks.registry import LockSpec
from engine.locks.service import LeaseLock, LockService
from engine.locks.storage import StorageLock
from engine.locks.zookeeper import ZooKeeperLock
from engine.storage import Storage

PROVIDERS = ["file", "storage", "zookeeper", "service"]
ZK_LEASE_S = 1.0  # a paused ZooKeeper holder's session expires this long after its last ping


@pytest.fixture(scope="session")
def zookeeper(tmp_path_factory) -> Iterator[str]:
    """A real ZooKeeper server (Debian's package) for the session: its connect string."""
    from infra.services.zookeeper import ZooKeeperServer

    with ZooKeeperServer(tmp_path_factory.mktemp("zookeeper")) as server:
        yield str(server.endpoint)


def stepping_clock(step_s: float) -> Callable[[], float]:
    """Each read is `step_s` later: a waiter sees an unrenewed lease expire on its 2nd look."""
    ticks = itertools.count(step=step_s)
    return lambda: float(next(ticks))


class Rig:
    """Locks of one provider on one table's storage. `stepping`: waiters (and the lock
    service) judge expiry on a stepping clock, so a paused holder's lease runs out at
    once; else on the real clock."""

    def __init__(
        self, provider: str, storage: Storage, zk: str | None, lease_s: float, stepping: bool
    ) -> None:
        self.provider, self.storage, self.zk = provider, storage, zk
        self.lease_s = ZK_LEASE_S if provider == "zookeeper" and stepping else lease_s
        self.stepping = stepping
        self.zk_path = f"/instantbench/test/{uuid.uuid4().hex[:12]}"
        clock = stepping_clock(lease_s) if stepping else time.monotonic
        self.service = LockService(monotonic=clock)
        self.made: list[Any] = []

    def spec(self) -> LockSpec:
        return LockSpec(self.provider, self.zk if self.provider == "zookeeper" else None)

    def lock(self, name: str, on_takeover: Callable[[object], None] | None = None) -> Any:
        monotonic = stepping_clock(self.lease_s) if self.stepping else time.monotonic
        if self.provider in ("file", "storage"):
            kind = FileLock if self.provider == "file" else StorageLock
            lock = kind(
                self.storage,
                holder_id=name,
                lease_s=self.lease_s,
                monotonic=monotonic,
                on_takeover=on_takeover,
            )
        elif self.provider == "zookeeper":
            lock = ZooKeeperLock(
                str(self.zk),
                self.zk_path,
                holder_id=name,
                lease_s=self.lease_s,
                on_takeover=on_takeover,
            )
        else:
            lock = LeaseLock(self.service, "table", holder_id=name, lease_s=self.lease_s)
            if on_takeover is not None:  # the service revokes, as the coordinator's does
                self.service.on_takeover = on_takeover
        self.made.append(lock)
        return lock

    def table_lock(self, table: Any, name: str) -> Any:
        """Replace `table`'s lock by one of this rig (revoking through its fence)."""
        lock = self.lock(name, on_takeover=table.fence.revoke)
        table.lock = table.generator.lock = lock
        return lock

    def close(self) -> None:
        for lock in self.made:
            lock.close()
