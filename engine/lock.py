"""Lock providers: in-process, a lease file on the table's storage, and a lease service.

Every provider serialises threads of one process first (a local mutex) and then, for the
shared kinds, other processes. Leases make a crashed holder's lock breakable. The other
providers users run: engine/lock_storage.py (one lock object, conditional writes) and
engine/lock_zookeeper.py (ZooKeeper); engine/lock_provider.py builds the chosen one.

What a shared provider gives the table (engine/table/table.py, engine/table/fencing.py):
`token`, the fencing token of the hold (unique, never reused by another holder, and
increasing from holder to holder); `on_takeover(old token)`, called by a waiter that
takes over a lease that ran out, before anything else (the table seals the old holder's
grant); for fault injection `suspend_renewal(bool)` (a stopped holder renews nothing) and
`successor(token)` (who took the lock after the hold `token`, None while it is the newest).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Protocol

from engine.errors import LockLostError, LockTimeoutError

if TYPE_CHECKING:
    from engine.storage import Storage

DEFAULT_TIMEOUT_S = 60.0


def default_owner() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


class LockProvider(Protocol):
    holder_id: str
    token: object  # the fencing token of the current hold (None while not held)

    def acquire(self, timeout_s: float | None = None) -> None: ...

    def release(self) -> None: ...

    def __enter__(self) -> LockProvider: ...

    def __exit__(self, *exc: object) -> None: ...


class _LockBase:
    """Context-manager plumbing; `timeout_s` is used by `with lock:`."""

    timeout_s: float = DEFAULT_TIMEOUT_S

    def acquire(self, timeout_s: float | None = None) -> None:
        raise NotImplementedError

    def release(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> _LockBase:
        self.acquire(self.timeout_s)
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


@dataclass
class _Slot:
    mutex: threading.Lock
    holder: str | None = None


class InProcessLock(_LockBase):
    """Shared by every InProcessLock created with the same key (e.g. the table path)."""

    _registry: dict[str, _Slot] = {}
    _registry_lock = threading.Lock()

    def __init__(
        self, key: str, holder_id: str | None = None, timeout_s: float = DEFAULT_TIMEOUT_S
    ):
        with self._registry_lock:
            self._slot = self._registry.setdefault(os.path.abspath(key), _Slot(threading.Lock()))
        self.key, self.holder_id, self.timeout_s = key, holder_id or default_owner(), timeout_s

    @property
    def holder(self) -> str | None:
        return self._slot.holder

    def acquire(self, timeout_s: float | None = None) -> None:
        timeout = self.timeout_s if timeout_s is None else timeout_s
        if not self._slot.mutex.acquire(timeout=timeout):
            raise LockTimeoutError(self.key, timeout, self._slot.holder)
        self._slot.holder = self.holder_id

    def release(self) -> None:
        self._slot.holder = None
        self._slot.mutex.release()


class _Renewer:
    """One daemon thread per lock object that renews the lease while it is held."""

    def __init__(self, renew: Callable[[], None], every_s: float) -> None:
        self._renew, self._every_s = renew, every_s
        self._held = threading.Event()
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._held.set()
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, daemon=True, name="lock-renewer")
            self._thread.start()

    def stop(self) -> None:
        self._held.clear()

    def close(self) -> None:
        self._closed.set()

    def _run(self) -> None:
        while not self._closed.wait(self._every_s):
            if self._held.is_set():
                # A failed renewal shows up later as a lost lease.
                with contextlib.suppress(Exception):
                    self._renew()


class LeaseObserver:
    """A waiter's view of a lease: held and unchanged (the same version) for `lease_s` on
    the waiter's own monotonic clock means expired. No wall clock is compared, so clock
    skew (of the holder or the waiter) cannot make a live lease look expired."""

    def __init__(self, lease_s: float, monotonic: Callable[[], float]) -> None:
        self.lease_s, self.monotonic = lease_s, monotonic
        self._observed: tuple[object, float] | None = None  # (version, first seen)

    def expired(self, version: object) -> bool:
        now = self.monotonic()
        if self._observed is None or self._observed[0] != version:
            self._observed = (version, now)  # a change (or a first look): the holder lives
            return False
        return now - self._observed[1] >= self.lease_s

    def reset(self) -> None:
        self._observed = None


class FileLock(_LockBase):
    """A lease on the table's storage, kept as a compare-and-swap register.

    The register is a folder of versions, `<path>/<version>`, each created put-if-absent
    with {state: held|free, owner, token, beat}; the largest version is the current one.
    Every change (acquire, renew, release, take-over) writes version v + 1 and so succeeds
    only if nobody else wrote v + 1 first: renewal is a CAS, and a holder that was paused
    while its lease was taken over fails to renew instead of overwriting the new lease.

    Expiry is judged by the waiter alone, on its own monotonic clock (like a ZooKeeper
    session timeout): a held lease is expired once the waiter has seen the same version
    for `lease_s` without a renewal. No wall clock is compared, so clock skew (of the
    holder or the waiter) cannot make a live lease look expired. The waiter that takes
    over calls `on_takeover(token)` before anything else (the table seals the old
    holder's fence grant: engine/table/fencing.py), so the old holder's critical write,
    wherever it was paused, can no longer land.
    """

    def __init__(
        self,
        storage: Storage,
        path: str = ".hoodie/.lock",
        holder_id: str | None = None,
        lease_s: float = 10.0,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        renew: bool = True,
        monotonic: Callable[[], float] = time.monotonic,
        on_takeover: Callable[[str | None], None] | None = None,
    ) -> None:
        self.storage, self.path, self.lease_s = storage, path, lease_s
        self.holder_id = holder_id or default_owner()
        self.timeout_s, self.monotonic, self.on_takeover = timeout_s, monotonic, on_takeover
        self.token: str | None = None  # of the lease held now (a fencing token)
        # Continuity (what a table may trust of its caches): `hold` names this hold (the
        # version it began with, unique in the register); `follows` names the hold right
        # before it if nobody held the lock in between (this object's own fast
        # re-acquire), else None.
        self.hold: int | None = None
        self.follows: int | None = None
        self._version: int | None = None  # the version this holder wrote last
        self._acquired: int = 0  # the version this hold began with
        self._released: int = 0  # the free version this object wrote last: a fast re-acquire
        self._kept: str | None = None  # its token, kept by a fast re-acquire
        self._observer = LeaseObserver(lease_s, monotonic)
        # Set by a holder that knows when a lease's holder is dead (a restarted stream
        # coordinator: a lease of its own identity is its fenced predecessor's, which is
        # taken over at once instead of after a lease; engine/stream/table_port.py).
        self.known_dead: Callable[[dict], bool] | None = None
        self._mutex = threading.Lock()  # threads of this process
        self._renew_lock = threading.Lock()  # renewal vs release
        self._renewer = _Renewer(self.renew, lease_s / 3) if renew else None

    def _version_path(self, version: int) -> str:
        return f"{self.path}/{version:020d}"

    def _newest(self) -> int:
        return max((int(n) for n in self.storage.list(self.path) if n.isdigit()), default=0)

    def read_lease(self) -> tuple[int, dict | None]:
        """(current version, its record); (0, None) if the lock was never taken."""
        while True:
            version = self._newest()
            if not version:
                return 0, None
            try:
                return version, json.loads(self.storage.read_bytes(self._version_path(version)))
            except FileNotFoundError:
                continue  # collected after two more changes: list again
            except ValueError:
                return version, {"state": "held", "owner": "?"}  # torn: expires by observation

    def _cas(self, version: int, record: dict, verify: bool = True) -> bool:
        """Write `version` if nobody has; False if someone did.

        Releases delete older versions (the newest two stay, so a reader that listed just
        before a change still finds one), so a writer paused across two changes could
        re-create a deleted number: `verify` then finds a newer version than its own. (A
        renewal or release that lands on a collected number is harmless: readers take the
        newest version, and a lease that was taken over has its grant sealed.)"""
        path = self._version_path(version)
        try:
            self.storage.put_if_absent(path, json.dumps(record).encode())
        except FileExistsError:
            return False
        if verify and self._newest() != version:
            with contextlib.suppress(OSError):
                self.storage.delete(path, missing_ok=True)  # a stale number: never current
            return False
        return True

    def _collect(self, below: int, since: int) -> None:
        """Delete the versions from the two before this hold's first up to the two newest
        (best effort; the hold before this one collected what came before it)."""
        for version in range(max(since - 2, 1), below - 1):
            with contextlib.suppress(OSError):
                self.storage.delete(self._version_path(version), missing_ok=True)

    @property
    def holder(self) -> str | None:
        _, lease = self.read_lease()
        return None if lease is None or lease.get("state") != "held" else lease.get("owner")

    def acquire(self, timeout_s: float | None = None) -> None:
        timeout = self.timeout_s if timeout_s is None else timeout_s
        deadline = time.monotonic() + timeout
        if not self._mutex.acquire(timeout=timeout):
            raise LockTimeoutError(self.path, timeout, self.holder)
        try:
            backoff = 0.001
            while not self._try_acquire():
                if time.monotonic() >= deadline:
                    raise LockTimeoutError(self.storage.full_path(self.path), timeout, self.holder)
                time.sleep(min(backoff, max(0.0, deadline - time.monotonic())))
                backoff = min(backoff * 2, 0.05)
        except BaseException:
            self._mutex.release()
            raise
        if self._renewer:
            self._renewer.start()

    def _try_acquire(self) -> bool:
        # Fast path: nobody took the lock since this object released it, so its token was
        # never revoked and stays (the fence grant of a token is made once).
        version, token = self._released, self._kept
        record = {"state": "held", "owner": self.holder_id, "token": token, "beat": 0}
        free, follows = True, self.hold
        if not (version and token and self._cas(version + 1, record)):
            follows = None
            token = uuid.uuid4().hex[:12]
            record = {**record, "token": token}
            version, lease = self.read_lease()
            free = lease is None or lease.get("state") != "held"
            if not free and not self._dead(lease) and not self._observer.expired(version):
                return False
            if not self._cas(version + 1, record):
                return False
        self._version, self._acquired, self.token = version + 1, version + 1, token
        self.hold, self.follows = version + 1, follows
        self._observer.reset()
        if not free and self.on_takeover is not None:
            try:
                self.on_takeover(lease.get("token"))
            except BaseException:
                self._give_back()()
                raise
        return True

    def _dead(self, lease: dict | None) -> bool:
        return lease is not None and self.known_dead is not None and self.known_dead(lease)

    def renew(self) -> None:
        with self._renew_lock:
            if self._version is None:
                return
            version = self._version + 1
            record = {"state": "held", "owner": self.holder_id, "token": self.token}
            if not self._cas(version, {**record, "beat": version}, verify=False):
                self._version = None
                raise LockLostError(f"lease {self.path} of {self.holder_id} was taken over")
            self._version = version

    def _give_back(self) -> Callable[[], None]:
        """Write a free version after ours (a no-op if the lease was taken meanwhile);
        returns the collection of this hold's superseded versions, for the caller to run
        once the lock is free (nobody waits for it then)."""
        self._released, self._kept = 0, None
        collect: Callable[[], None] = _nothing
        if self._version is not None:
            free = self._version + 1
            with contextlib.suppress(OSError):
                if self._cas(free, {"state": "free", "owner": self.holder_id}, verify=False):
                    self._released, self._kept = free, self.token
                    collect = functools.partial(self._collect, below=free, since=self._acquired)
        self._version, self.token = None, None
        return collect

    def close(self) -> None:
        """Stop the renewal thread (the lock object is not used afterwards)."""
        if self._renewer:
            self._renewer.close()

    def suspend_renewal(self, suspended: bool) -> None:
        """Fault injection: a holder stopped in its critical section renews nothing (as a
        SIGSTOPped process would), so its lease runs out; resumed, it renews again (a CAS
        that fails once a waiter took over)."""
        if self._renewer and self.token is not None:
            if suspended:
                self._renewer.stop()
            else:
                self._renewer.start()

    def successor(self, token: object) -> str | None:
        """Who wrote the lease register after the hold `token` (its new holder, or one
        that since freed it); None while that hold's record is still the newest."""
        _, lease = self.read_lease()
        if lease is None or token is None:
            return None
        # A free record is a newer holder's release: a paused holder releases nothing.
        if lease.get("state") != "free" and lease.get("token") == token:
            return None
        return str(lease.get("owner"))

    def release(self) -> None:
        if self._renewer:
            self._renewer.stop()
        collect = _nothing
        with self._renew_lock:
            try:
                collect = self._give_back()  # not renewed any more: the lease runs out
            finally:
                self._mutex.release()
        collect()  # after the mutex: the next holder (another thread) need not wait for it


def _nothing() -> None:
    """No collection to do."""


@dataclass
class Lease:
    owner: str
    token: int
    expires_ms: int


class LockService:
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

    def holder_record(self, name: str) -> dict | None:
        """`holder` as plain data (over RPC): {owner, token, expires_ms}."""
        lease = self.holder(name)
        return None if lease is None else asdict(lease)


class LeaseClient(Protocol):
    """What `LeaseLock` needs: `LockService` itself or an RPC client with the same calls."""

    def acquire(self, name: str, owner: str, lease_s: float) -> int | bool: ...

    def renew(self, name: str, token: int, lease_s: float) -> bool: ...

    def release(self, name: str, token: int) -> bool: ...


class LeaseLock(_LockBase):
    """A LockProvider on top of a lease service (local or remote)."""

    def __init__(
        self,
        client: LeaseClient,
        name: str,
        holder_id: str | None = None,
        lease_s: float = 10.0,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.client, self.name, self.lease_s = client, name, lease_s
        self.holder_id, self.timeout_s = holder_id or default_owner(), timeout_s
        self.token: int | None = None
        self._mutex = threading.Lock()
        self._renewer = _Renewer(self._renew, lease_s / 3)

    def acquire(self, timeout_s: float | None = None) -> None:
        timeout = self.timeout_s if timeout_s is None else timeout_s
        deadline = time.monotonic() + timeout
        if not self._mutex.acquire(timeout=timeout):
            raise LockTimeoutError(self.name, timeout, None)
        backoff = 0.005
        while True:
            try:
                token = self.client.acquire(self.name, self.holder_id, self.lease_s)
            except BaseException:
                self._mutex.release()
                raise
            if token is not False:
                # An int subclass stays (a ServiceToken names its fence domain).
                self.token = token if isinstance(token, int) else int(token)
                self._renewer.start()
                return
            if time.monotonic() >= deadline:
                self._mutex.release()
                raise LockTimeoutError(self.name, timeout, None)
            time.sleep(min(backoff, max(0.0, deadline - time.monotonic())))
            backoff = min(backoff * 2, 0.1)

    def _renew(self) -> None:
        token = self.token
        if token is not None and not self.client.renew(self.name, token, self.lease_s):
            self.token = None

    def close(self) -> None:
        """Stop the renewal thread (the lock object is not used afterwards)."""
        self._renewer.close()

    def successor(self, token: object) -> str | None:
        """Who holds the lock now if not the hold `token` (None while nobody does: a
        service forgets a released lease; or if the client cannot tell)."""
        holder = getattr(self.client, "holder_record", None)
        record = holder(self.name) if holder is not None and token is not None else None
        return None if record is None or record["token"] == token else str(record["owner"])

    def suspend_renewal(self, suspended: bool) -> None:
        """Fault injection: a stopped holder renews nothing (as FileLock)."""
        if self.token is not None:
            if suspended:
                self._renewer.stop()
            else:
                self._renewer.start()

    def release(self) -> None:
        self._renewer.stop()
        token, self.token = self.token, None
        try:
            if token is not None:
                self.client.release(self.name, token)
        finally:
            self._mutex.release()
