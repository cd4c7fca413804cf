"""The coordinator's lock service, reached over RPC by writers in other processes.

The lock service lives in the coordinator's process, so it restarts with it: a new
service knows nothing of its predecessor's leases. Two things keep exclusion anyway.
Its tokens carry its coordinator's epoch in the high bits (`service_first_token`), and a
hold's fence grant lives in that epoch's domain (`ServiceLeaseClient.fence_domain`): the
next coordinator's epoch seals that domain (engine/table/sealing.py advance_epoch), so no
hold granted by an older service, crashed or only paused, can write to the timeline any
more. And writers find the service through a file the coordinator rewrites on every start
(`write_service_endpoint`), read again when a call fails (`ServiceLeaseClient`).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from dataclasses import asdict
from typing import Any, TypeVar

from engine.errors import EngineError
from engine.locks.base import Record
from engine.locks.service import EPOCH_SHIFT, SERVICE_LOCK, LeaseClient, LeaseLock
from engine.stream.errors import StreamError, TransportError
from engine.stream.transport.rpc import Endpoint, RpcClient

T = TypeVar("T")


class RpcLeaseClient(LeaseClient):
    """A LeaseClient over RPC: the coordinator's LockService, remotely. It does not ask
    for the holder's record (`holder_record`: None, it cannot tell)."""

    def __init__(self, endpoint: Endpoint, *, timeout_s: float = 10.0, retries: int = 5) -> None:
        self.rpc = RpcClient(endpoint, timeout_s=timeout_s, retries=retries)

    def _call(self, method: str, **params: Any) -> Any:
        reply = self.rpc.call(method, **params)
        if reply.get("status") != "OK":
            raise StreamError(f"{method}: {reply.get('error')}")
        return reply["result"]

    def acquire(self, name: str, owner: str, lease_s: float) -> int | bool:
        return self._call("lock.acquire", name=name, owner=owner, lease_s=lease_s)

    def renew(self, name: str, token: int, lease_s: float) -> bool:
        return self._call("lock.renew", name=name, token=token, lease_s=lease_s)

    def release(self, name: str, token: int) -> bool:
        return self._call("lock.release", name=name, token=token)


def rpc_lock(
    endpoint: Endpoint,
    name: str = SERVICE_LOCK,
    holder_id: str | None = None,
    lease_s: float = 10.0,
) -> LeaseLock:
    """A LockProvider backed by the coordinator's LockService (Table.open(lock=...))."""
    return LeaseLock(RpcLeaseClient(endpoint), name, holder_id=holder_id, lease_s=lease_s)


def write_service_endpoint(path: str, endpoint: Endpoint) -> None:
    """Publish the lock service's address (atomically: a reader never sees half of it)."""
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(asdict(endpoint), f)
    os.replace(tmp, path)


class ServiceLeaseClient(LeaseClient):
    """The LeaseClient for the coordinator's lock service, found through the file it
    publishes its address in; a call that fails reads the file again and retries once (a
    restarted coordinator serves on a new port). A hold's fence domain is the epoch in
    its token's high bits."""

    def __init__(self, endpoint_file: str) -> None:
        self.endpoint_file = endpoint_file
        self._client: RpcLeaseClient | None = None
        self._endpoint: Endpoint | None = None
        self._mutex = threading.Lock()  # one RPC connection, one caller at a time

    def _connect(self) -> RpcLeaseClient:
        try:
            with open(self.endpoint_file) as f:
                endpoint = Endpoint(**json.load(f))
        except (OSError, ValueError) as exc:
            raise EngineError(f"{self.endpoint_file}: no lock service published ({exc})") from None
        if endpoint != self._endpoint or self._client is None:
            if self._client is not None:
                self._client.rpc.close()
            self._client, self._endpoint = RpcLeaseClient(endpoint, retries=2), endpoint
        return self._client

    def _call(self, call: Callable[[RpcLeaseClient], T]) -> T:
        with self._mutex:
            try:
                return call(self._connect())
            except TransportError:
                self._endpoint = None  # read the file again: the service may have moved
                return call(self._connect())

    def acquire(self, name: str, owner: str, lease_s: float) -> int | bool:
        return self._call(lambda client: client.acquire(name, owner, lease_s))

    def renew(self, name: str, token: int, lease_s: float) -> bool:
        return self._call(lambda client: client.renew(name, int(token), lease_s))

    def release(self, name: str, token: int) -> bool:
        return self._call(lambda client: client.release(name, int(token)))

    def fence_domain(self, token: int) -> str | None:
        """The fence domain of this hold's grant: its service's epoch."""
        return f"e{token >> EPOCH_SHIFT}"

    def holder_record(self, name: str) -> Record | None:
        """The current lease as plain data; None if nobody holds it or the service cannot
        be asked (an observation for fault injection, never a decision)."""
        with self._mutex:
            try:
                reply = self._connect().rpc.call("lock.holder_record", name=name)
            except EngineError:  # no service published, or it moved: ask again later
                self._endpoint = None
                return None
        return reply.get("result") if reply.get("status") == "OK" else None
