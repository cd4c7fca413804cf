"""Build the table lock a deployment chose (`engine.lock.provider` in a scenario).

file: a lease register of put-if-absent versions in the table's storage (engine/lock.py
FileLock); storage: one lock object changed by conditional writes, as Hudi 1.1's
storage-based provider (engine/lock_storage.py); zookeeper: a ZooKeeper server through
kazoo's lock recipe, as Hudi's ZooKeeper provider (engine/lock_zookeeper.py); service: the
stream coordinator's LockService over RPC (engine/lock.py LeaseLock).

The lock service lives in the coordinator's process, so it restarts with it: a new
service knows nothing of its predecessor's leases. Two things keep exclusion anyway.
Its tokens carry its coordinator's epoch in the high bits (`service_first_token`), and a
hold's fence grant lives in that epoch's domain (`ServiceToken.fence_domain`): the next
coordinator's epoch seals that domain (engine/table/fencing.py advance_epoch), so no hold
granted by an older service, crashed or only paused, can write to the timeline any more.
And writers find the service through a file the coordinator rewrites on every start
(`write_service_endpoint`), read again when a call fails (`ServiceLeaseClient`).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from engine.errors import EngineError
from engine.lock import FileLock, LeaseClient, LeaseLock, LockProvider, LockService

if TYPE_CHECKING:
    from engine.storage import Storage
    from engine.stream.transport.rpc import Endpoint
    from engine.table import Table

PROVIDERS = ("file", "service", "storage", "zookeeper")
ZOOKEEPER_ROOT = "/instantbench/tables"
SERVICE_LOCK = "table"  # the lock service's name of the table lock


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


EPOCH_SHIFT = 32


class ServiceToken(int):
    """A lock service's token: its coordinator's epoch in the high bits."""

    @property
    def fence_domain(self) -> str:
        """The fence domain of this hold's grant: its service's epoch."""
        return f"e{self >> EPOCH_SHIFT}"


def service_first_token(epoch: int) -> int:
    """The first token of the lock service of coordinator `epoch`: above every token an
    earlier coordinator's service handed out, and naming the epoch."""
    return (epoch << EPOCH_SHIFT) + 1


def serve_table_lock(table: Table, epoch: int, lease_s: float) -> LockService:
    """The lock service of coordinator `epoch` for its table, which from now on locks
    through it in-process; a lease that ran out unreleased is revoked (its grant sealed)
    before the lock is granted again."""
    service = LockService(on_takeover=table.fence.revoke, first_token=service_first_token(epoch))
    lock = LeaseLock(service, SERVICE_LOCK, holder_id=table.writer_id, lease_s=lease_s)
    table.lock = table.generator.lock = lock
    return service


def write_service_endpoint(path: str, endpoint: Endpoint) -> None:
    """Publish the lock service's address (atomically: a reader never sees half of it)."""
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(asdict(endpoint), f)
    os.replace(tmp, path)


class ServiceLeaseClient:
    """engine.lock.LeaseClient for the coordinator's lock service, found through the file
    it publishes its address in; a call that fails reads the file again and retries once
    (a restarted coordinator serves on a new port). Tokens come back as ServiceToken."""

    def __init__(self, endpoint_file: str) -> None:
        self.endpoint_file = endpoint_file
        self._client: Any = None
        self._endpoint: Any = None
        self._mutex = threading.Lock()  # one RPC connection, one caller at a time

    def _connect(self) -> Any:
        from engine.stream.transport.rpc import Endpoint, RpcLeaseClient

        try:
            with open(self.endpoint_file) as f:
                endpoint = Endpoint(**json.load(f))
        except (OSError, ValueError) as exc:
            raise EngineError(f"{self.endpoint_file}: no lock service published ({exc})") from None
        if endpoint != self._endpoint:
            if self._client is not None:
                self._client.rpc.close()
            self._client, self._endpoint = RpcLeaseClient(endpoint, retries=2), endpoint
        return self._client

    def _call(self, method: str, **params: Any) -> Any:
        from engine.stream.errors import TransportError

        with self._mutex:
            try:
                return getattr(self._connect(), method)(**params)
            except TransportError:
                self._endpoint = None  # read the file again: the service may have moved
                return getattr(self._connect(), method)(**params)

    def acquire(self, name: str, owner: str, lease_s: float) -> int | bool:
        token = self._call("acquire", name=name, owner=owner, lease_s=lease_s)
        return token if token is False else ServiceToken(token)

    def renew(self, name: str, token: int, lease_s: float) -> bool:
        return self._call("renew", name=name, token=int(token), lease_s=lease_s)

    def release(self, name: str, token: int) -> bool:
        return self._call("release", name=name, token=int(token))

    def holder_record(self, name: str) -> dict | None:
        """The current lease as plain data; None if nobody holds it or the service cannot
        be asked (an observation for fault injection, never a decision)."""
        with self._mutex:
            try:
                reply = self._connect().rpc.call("lock.holder_record", name=name)
            except EngineError:  # no service published, or it moved: ask again later
                self._endpoint = None
                return None
        return reply.get("result") if reply.get("status") == "OK" else None


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
        from engine.lock_storage import StorageLock

        return StorageLock(
            storage, holder_id=holder_id, lease_s=spec.lease_s, on_takeover=on_takeover
        )
    if spec.provider == "zookeeper":
        from engine.lock_zookeeper import ZooKeeperLock

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
