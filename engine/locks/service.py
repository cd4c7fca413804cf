"""The `service` lock provider: in-memory leases served by the stream coordinator
(`LockService`, over RPC: engine/stream/transport/server.py) and the lock on top of a
lease client (`LeaseLock`); the RPC clients are in engine/locks/service_rpc.py."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from engine.locks.base import DEFAULT_TIMEOUT_S, Record, record_successor
from engine.locks.lease import PolledLease

SERVICE_LOCK = "table"  # the lock service's name of the table lock
EPOCH_SHIFT = 32  # a coordinator's lock service hands out tokens from epoch << EPOCH_SHIFT


def service_first_token(epoch: int) -> int:
    """The first token of the lock service of coordinator `epoch`: above every token an
    earlier coordinator's service handed out, and naming the epoch."""
    return (epoch << EPOCH_SHIFT) + 1


class LeaseClient:
    """What `LeaseLock` calls: `LockService` itself or an RPC client with the same calls.
    The last two are optional features, with the answer of a client that cannot tell."""

    def acquire(self, name: str, owner: str, lease_s: float) -> int | bool:
        """A token, or False if someone else holds an unexpired lease."""
        raise NotImplementedError

    def renew(self, name: str, token: int, lease_s: float) -> bool:
        raise NotImplementedError

    def release(self, name: str, token: int) -> bool:
        raise NotImplementedError

    def holder_record(self, name: str) -> Record | None:
        """The current lease as plain data {owner, token, expires_ms}; None if nobody
        holds it, or if the client cannot tell."""
        return None

    def fence_domain(self, token: int) -> str | None:
        """The fence domain of the hold `token`'s grant; None: the table's own."""
        return None


@dataclass
class Lease:
    owner: str
    token: int
    expires_ms: int


class LockService(LeaseClient):
    """In-memory named leases; a coordinator serves this over RPC to remote writers.

    Tokens increase strictly across all grants, so they double as fencing tokens. Expiry
    is judged by the service's own monotonic clock, which clock-skew faults do not move.

    A lease that ran out unreleased may belong to a holder that is only paused: before
    granting the lock to anyone (its owner included: another thread, a retried hold), the
    service calls `on_takeover(old token)` (the coordinator's table seals that token's
    fence grant: engine/table/fencing.py), so the old holder's critical write can no
    longer land. If it raises, nothing is granted. `first_token`: tokens name fence
    grants on the table, so a restarted service must not hand out a token an earlier one
    did (a coordinator passes one above its predecessors', e.g. epoch << 32).
    """

    def __init__(
        self,
        monotonic: Callable[[], float] = time.monotonic,
        on_takeover: Callable[[int], None] | None = None,
        first_token: int = 1,
    ) -> None:
        self.monotonic, self.on_takeover = monotonic, on_takeover
        self._leases: dict[str, Lease] = {}
        self._lock = threading.Lock()
        self._tokens = itertools.count(first_token)

    def acquire(self, name: str, owner: str, lease_s: float) -> int | bool:
        """A token, or False if someone else holds an unexpired lease.

        Re-acquiring by the current owner refreshes and returns its token, so an RPC retried
        after a lost reply is harmless.
        """
        now = int(self.monotonic() * 1000)
        with self._lock:
            lease = self._leases.get(name)
            if lease is not None and lease.expires_ms >= now and lease.owner != owner:
                return False
            if lease is not None and lease.owner == owner and lease.expires_ms >= now:
                lease.expires_ms = now + int(lease_s * 1000)
                return lease.token
            if lease is not None and self.on_takeover is not None:
                self.on_takeover(lease.token)  # ran out unreleased: seal before granting
            token = next(self._tokens)
            self._leases[name] = Lease(owner, token, now + int(lease_s * 1000))
            return token

    def renew(self, name: str, token: int, lease_s: float) -> bool:
        now = int(self.monotonic() * 1000)
        with self._lock:
            lease = self._leases.get(name)
            if lease is None or lease.token != token or lease.expires_ms < now:
                return False
            lease.expires_ms = now + int(lease_s * 1000)
            return True

    def release(self, name: str, token: int) -> bool:
        with self._lock:
            lease = self._leases.get(name)
            if lease is None or lease.token != token:
                return False
            del self._leases[name]
            return True

    def holder(self, name: str) -> Lease | None:
        with self._lock:
            lease = self._leases.get(name)
            if lease is None or lease.expires_ms < int(self.monotonic() * 1000):
                return None
            return Lease(lease.owner, lease.token, lease.expires_ms)

    def holder_record(self, name: str) -> Record | None:
        """`holder` as plain data (over RPC): {owner, token, expires_ms}."""
        lease = self.holder(name)
        return None if lease is None else asdict(lease)


class LeaseLock(PolledLease):
    """A LockProvider on top of a lease service (local or remote)."""

    backoff_s = (0.005, 0.1)  # a try is a call to the service

    def __init__(
        self,
        client: LeaseClient,
        name: str,
        holder_id: str | None = None,
        lease_s: float = 10.0,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        super().__init__(holder_id, lease_s, timeout_s, renew=True)
        self.client, self.name = client, name
        self.token: int | None = None

    @property
    def endpoint(self) -> str:
        return self.name

    @property
    def fence_domain(self) -> str | None:
        return None if self.token is None else self.client.fence_domain(self.token)

    def _record(self) -> Record | None:
        """The service's lease as plain data (None if nobody holds it, or if the client
        cannot tell)."""
        return self.client.holder_record(self.name)

    @property
    def holder(self) -> str | None:
        record = self._record()
        return None if record is None else str(record["owner"])

    def _try_acquire(self) -> bool:
        token = self.client.acquire(self.name, self.holder_id, self.lease_s)
        if token is False:
            return False
        self.token = int(token)
        return True

    def renew(self) -> None:
        token = self.token
        if token is not None and not self.client.renew(self.name, token, self.lease_s):
            self.token = None

    def successor(self, token: object) -> str | None:
        """Who holds the lock now if not the hold `token` (None while nobody does: a
        service forgets a released lease; or if the client cannot tell)."""
        return record_successor(self._record() if token is not None else None, token)

    def release(self) -> None:
        if self._renewer:
            self._renewer.stop()
        token, self.token = self.token, None
        try:
            if token is not None:
                self.client.release(self.name, token)
        finally:
            self._mutex.release()
