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
The clients that poll and renew a lease share PolledLease; those whose lease lives in the
table's storage (FileLock, StorageLock) share StoredLease: waiters' expiry, take-over,
release and continuity (`hold`, `follows`).
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
from typing import TYPE_CHECKING, Any, Protocol, Self

from engine.errors import LockLostError, LockTimeoutError

if TYPE_CHECKING:
    from engine.storage import Storage

DEFAULT_TIMEOUT_S = 60.0

# A lock's record as JSON: {state: held | free, owner, token, ...} (the lease register's
# versions, the storage lock object, ZooKeeper's holder record, the service's lease).
Record = dict[str, Any]


def default_owner() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


class LockProvider(Protocol):
    holder_id: str

    @property
    def token(self) -> object:
        """The fencing token of the current hold (None while not held)."""

    def acquire(self, timeout_s: float | None = None) -> None: ...

    def release(self) -> None: ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc: object) -> None: ...


class _LockBase:
    """Context-manager plumbing; `timeout_s` is used by `with lock:`."""

    timeout_s: float = DEFAULT_TIMEOUT_S

    def acquire(self, timeout_s: float | None = None) -> None:
        raise NotImplementedError

    def release(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
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
        self.token: object = None  # no fencing: every holder is in this process

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

    def close(self) -> None:
        """Nothing runs in the background."""


def record_successor(record: Record | None, token: object) -> str | None:
    """Who took a lock after the hold `token`, by the lock's newest record (its new
    holder, or one that since freed it); None while that hold's record is still the
    newest, or when there is no record (or no hold) to tell."""
    if record is None or token is None:
        return None
    # A free record is a newer holder's release: a paused holder releases nothing.
    if record.get("state") != "free" and record.get("token") == token:
        return None
    return str(record.get("owner"))


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


class PolledLease(_LockBase):
    """A lease taken by trying again and again (`_try_acquire`, with a backoff) and kept
    by renewing it (`renew`) every third of it on a daemon thread while held: what the
    lease service's, the lease register's and the storage lock object's clients share.
    (ZooKeeper's lock recipe waits and keeps its session by itself.)"""

    backoff_s = (0.001, 0.05)  # the first and the longest pause between two tries
    token: object  # the fencing token of the current hold (None while not held)

    def __init__(self, holder_id: str | None, lease_s: float, timeout_s: float, renew: bool):
        self.holder_id, self.lease_s = holder_id or default_owner(), lease_s
        self.timeout_s = timeout_s
        self._mutex = threading.Lock()  # threads of this process
        self._renewer = _Renewer(self.renew, lease_s / 3) if renew else None

    @property
    def endpoint(self) -> str:
        """Where the lock is (for errors)."""
        raise NotImplementedError

    @property
    def holder(self) -> str | None:
        raise NotImplementedError

    def _try_acquire(self) -> bool:
        raise NotImplementedError

    def renew(self) -> None:
        raise NotImplementedError

    def acquire(self, timeout_s: float | None = None) -> None:
        timeout = self.timeout_s if timeout_s is None else timeout_s
        deadline = time.monotonic() + timeout
        if not self._mutex.acquire(timeout=timeout):
            raise LockTimeoutError(self.endpoint, timeout, self.holder)
        try:
            backoff, longest = self.backoff_s
            while not self._try_acquire():
                if time.monotonic() >= deadline:
                    raise LockTimeoutError(self.endpoint, timeout, self.holder)
                time.sleep(min(backoff, max(0.0, deadline - time.monotonic())))
                backoff = min(backoff * 2, longest)
        except BaseException:
            self._mutex.release()
            raise
        if self._renewer:
            self._renewer.start()

    def suspend_renewal(self, suspended: bool) -> None:
        """Fault injection: a holder stopped in its critical section renews nothing (as a
        SIGSTOPped process would), so its lease runs out; resumed, it renews again (which
        fails once a waiter took over)."""
        if self._renewer and self.token is not None:
            if suspended:
                self._renewer.stop()
            else:
                self._renewer.start()

    def close(self) -> None:
        """Stop the renewal thread (the lock object is not used afterwards)."""
        if self._renewer:
            self._renewer.close()


class StoredLease(PolledLease):
    """A lease kept in the table's storage, changed only by compare-and-swaps (FileLock's
    register of versions, engine/lock_storage.py StorageLock's one object).

    Expiry is judged by the waiter alone, on its own monotonic clock (like a ZooKeeper
    session timeout): a held lease is expired once the waiter has seen the same version
    for `lease_s` without a renewal (LeaseObserver). Renewal is a CAS too, so a holder
    that was paused while its lease was taken over fails to renew instead of overwriting
    the new lease. The waiter that takes over calls `on_takeover(old token)` before
    anything else (the table seals the old holder's fence grant: engine/table/fencing.py),
    so the old holder's critical write, wherever it was paused, can no longer land.
    """

    default_path: str  # where a kind keeps its lock in the table's storage

    def __init__(
        self,
        storage: Storage,
        path: str | None = None,
        holder_id: str | None = None,
        lease_s: float = 10.0,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        renew: bool = True,
        monotonic: Callable[[], float] = time.monotonic,
        on_takeover: Callable[[object], None] | None = None,
    ) -> None:
        super().__init__(holder_id, lease_s, timeout_s, renew)
        self.storage, self.on_takeover = storage, on_takeover
        self.path = path or self.default_path
        # Continuity (what a table may trust of its caches): `hold` names this hold
        # (unique in the lock's records); `follows` names the hold right before it if
        # nobody held the lock in between (this object's own fast re-acquire), else None.
        self.hold: int | None = None
        self.follows: int | None = None
        self._observer = LeaseObserver(lease_s, monotonic)
        # Set by a holder that knows when a lease's holder is dead (a restarted stream
        # coordinator: a lease of its own identity is its fenced predecessor's, which is
        # taken over at once instead of after a lease; engine/stream/table_port.py).
        self.known_dead: Callable[[Record], bool] | None = None
        self._renew_lock = threading.Lock()  # renewal vs release

    def read_record(self) -> tuple[object, Record | None]:
        """(version, record) of the lock's current state; record None if never taken."""
        raise NotImplementedError

    def _give_back(self) -> Callable[[], None]:
        """Write the lock free after this holder's last write (nothing if it was taken
        meanwhile); returns what is left to do once the lock is free (nobody waits then)."""
        raise NotImplementedError

    @property
    def endpoint(self) -> str:
        return self.storage.full_path(self.path)

    @property
    def holder(self) -> str | None:
        _, record = self.read_record()
        return None if record is None or record.get("state") != "held" else str(record.get("owner"))

    def _may_take(self, version: object, record: Record | None) -> bool:
        """Is the lock free, its holder known dead, or its lease run out (as observed)?"""
        if record is None or record.get("state") != "held":
            return True
        dead = self.known_dead is not None and self.known_dead(record)
        return dead or self._observer.expired(version)

    def _take_over(self, previous: Record) -> None:
        """Revoke the token of a holder whose lease ran out unreleased, before anything
        else; if that fails, the lock is given back and nothing is held."""
        if self.on_takeover is None:
            return
        try:
            self.on_takeover(previous.get("token"))
        except BaseException:
            self._give_back()()
            raise

    def successor(self, token: object) -> str | None:
        """Who wrote the lock after the hold `token`; None while that hold's record is
        still the newest."""
        return record_successor(self.read_record()[1], token)

    def release(self) -> None:
        if self._renewer:
            self._renewer.stop()
        with self._renew_lock:
            try:
                after = self._give_back()  # not renewed any more: the lease runs out
            finally:
                self._mutex.release()
        after()  # after the mutex: the next holder (another thread) need not wait for it


class FileLock(StoredLease):
    """A lease on the table's storage, kept as a compare-and-swap register (StoredLease).

    The register is a folder of versions, `<path>/<version>`, each created put-if-absent
    with {state: held|free, owner, token, beat}; the largest version is the current one.
    Every change (acquire, renew, release, take-over) writes version v + 1 and so succeeds
    only if nobody else wrote v + 1 first. Tokens are unique, not ordered.
    """

    default_path = ".hoodie/.lock"
    # The hold's state (instance attributes once changed):
    token: str | None = None  # of the lease held now (a fencing token)
    _version: int | None = None  # the version this holder wrote last
    _acquired = 0  # the version this hold began with
    _released = 0  # the free version this object wrote last: a fast re-acquire
    _kept: str | None = None  # its token, kept by a fast re-acquire

    def _version_path(self, version: int) -> str:
        return f"{self.path}/{version:020d}"

    def _newest(self) -> int:
        return max((int(n) for n in self.storage.list(self.path) if n.isdigit()), default=0)

    def read_lease(self) -> tuple[int, Record | None]:
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

    def read_record(self) -> tuple[object, Record | None]:
        return self.read_lease()

    def _cas(self, version: int, record: Record, verify: bool = True) -> bool:
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

    def _try_acquire(self) -> bool:
        # Fast path: nobody took the lock since this object released it, so its token was
        # never revoked and stays (the fence grant of a token is made once).
        version, token = self._released, self._kept
        record: Record = {"state": "held", "owner": self.holder_id, "token": token, "beat": 0}
        lease: Record | None = None
        follows = self.hold
        if not (version and token and self._cas(version + 1, record)):
            follows = None
            token = uuid.uuid4().hex[:12]
            record = {**record, "token": token}
            version, lease = self.read_lease()
            if not self._may_take(version, lease) or not self._cas(version + 1, record):
                return False
        self._version, self._acquired, self.token = version + 1, version + 1, token
        self.hold, self.follows = version + 1, follows
        self._observer.reset()
        if lease is not None and lease.get("state") == "held":
            self._take_over(lease)
        return True

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
        """Write a free version after ours; what is left is the collection of this hold's
        superseded versions."""
        self._released, self._kept = 0, None
        collect: Callable[[], None] = nothing_left
        if self._version is not None:
            free = self._version + 1
            with contextlib.suppress(OSError):
                if self._cas(free, {"state": "free", "owner": self.holder_id}, verify=False):
                    self._released, self._kept = free, self.token
                    collect = functools.partial(self._collect, below=free, since=self._acquired)
        self._version, self.token = None, None
        return collect


def nothing_left() -> None:
    """What is left to do after a release that leaves nothing to do (StoredLease)."""


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

    def _record(self) -> Record | None:
        """The service's lease as plain data (None if nobody holds it, or if the client
        cannot tell)."""
        holder_record = getattr(self.client, "holder_record", None)
        return None if holder_record is None else holder_record(self.name)

    @property
    def holder(self) -> str | None:
        record = self._record()
        return None if record is None else str(record["owner"])

    def _try_acquire(self) -> bool:
        token = self.client.acquire(self.name, self.holder_id, self.lease_s)
        if token is False:
            return False
        # An int subclass stays (a ServiceToken names its fence domain).
        self.token = token if isinstance(token, int) else int(token)
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
