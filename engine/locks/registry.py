"""The provider registry: build the table lock a deployment chose (`engine.lock.provider`
in a scenario).

file: a lease register of put-if-absent versions in the table's storage
(engine/locks/file.py); storage: one lock object changed by conditional writes, as Hudi
1.1's storage-based provider (engine/locks/storage.py); zookeeper: a ZooKeeper server
through kazoo's lock recipe, as Hudi's ZooKeeper provider (engine/locks/zookeeper.py);
service: the stream coordinator's LockService over RPC (engine/locks/service.py,
engine/locks/service_rpc.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from engine.errors import EngineError
from engine.locks.base import LockProvider
from engine.locks.file import FileLock
from engine.locks.service import SERVICE_LOCK, LeaseClient, LeaseLock
from engine.locks.service_rpc import ServiceLeaseClient
from engine.locks.storage import StorageLock
from engine.locks.zookeeper import ZooKeeperLock
from engine.storage import Storage

PROVIDERS = ("file", "service", "storage", "zookeeper")
ZOOKEEPER_ROOT = "/instantbench/tables"


@dataclass(frozen=True)
class LockSpec:
    provider: str = "file"
    # zookeeper: its connect string (host:port[,host:port]); service: the file in which the
    # coordinator publishes its lock service's address
    endpoint: str | None = None
    lease_s: float = 10.0

    def __post_init__(self) -> None:
        if self.provider not in PROVIDERS:
            raise EngineError(f"lock provider {self.provider!r}: one of {', '.join(PROVIDERS)}")
        if self.provider == "zookeeper" and not self.endpoint:
            raise EngineError("lock provider zookeeper needs an endpoint (host:port)")


def zookeeper_path(storage: Storage) -> str:
    """The table's lock znode: one per table root (Hudi: base path + lock key)."""
    return f"{ZOOKEEPER_ROOT}/{hashlib.sha1(storage.root.encode()).hexdigest()[:16]}"


def build_lock(
    spec: LockSpec,
    storage: Storage,
    holder_id: str,
    on_takeover: Callable[[object], None] | None,
    lease_client: LeaseClient | None = None,
) -> LockProvider:
    """The table lock of `spec` for one writer; `on_takeover(old token)` revokes the
    grant of a holder whose lease a waiter took over (engine/table/fencing.py)."""
    if spec.provider == "file":
        return FileLock(storage, holder_id=holder_id, lease_s=spec.lease_s, on_takeover=on_takeover)
    if spec.provider == "storage":
        return StorageLock(
            storage, holder_id=holder_id, lease_s=spec.lease_s, on_takeover=on_takeover
        )
    if spec.provider == "zookeeper":
        return ZooKeeperLock(
            str(spec.endpoint),
            zookeeper_path(storage),
            holder_id=holder_id,
            lease_s=spec.lease_s,
            on_takeover=on_takeover,
        )
    if lease_client is None and not spec.endpoint:
        raise EngineError("lock provider service needs the coordinator's lock service")
    client = lease_client or ServiceLeaseClient(str(spec.endpoint))
    return LeaseLock(client, SERVICE_LOCK, holder_id=holder_id, lease_s=spec.lease_s)
