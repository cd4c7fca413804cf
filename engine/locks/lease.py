"""Leases: locks a crashed holder cannot keep forever.

The clients that poll and renew a lease share PolledLease (the lease service's client,
engine/locks/service.py; the stored leases); those whose lease lives in the table's
storage (FileLock, engine/locks/file.py; StorageLock, engine/locks/storage.py) share
StoredLease: waiters' expiry, take-over, release and continuity (`hold`, `follows`).
`on_takeover(old token)` is called by a waiter that takes over a lease that ran out,
before anything else (the table seals the old holder's grant).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from engine.errors import LockTimeoutError
from engine.locks.base import (
    DEFAULT_TIMEOUT_S,
    LockProvider,
    Record,
    default_owner,
    record_successor,
)

if TYPE_CHECKING:
    from engine.storage import Storage


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


class PolledLease(LockProvider):
    """A lease taken by trying again and again (`_try_acquire`, with a backoff) and kept
    by renewing it (`renew`) every third of it on a daemon thread while held: what the
    lease service's, the lease register's and the storage lock object's clients share.
    (ZooKeeper's lock recipe waits and keeps its session by itself.)"""

    backoff_s = (0.001, 0.05)  # the first and the longest pause between two tries

    def __init__(
        self, holder_id: str | None, lease_s: float, timeout_s: float, renew: bool
    ) -> None:
        self.holder_id, self.lease_s = holder_id or default_owner(), lease_s
        self.timeout_s = timeout_s
        self._mutex = threading.Lock()  # threads of this process
        self._renewer = _Renewer(self.renew, lease_s / 3) if renew else None

    @property
    def endpoint(self) -> str:
        """Where the lock is (for errors)."""
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
    register of versions, engine/locks/file.py; StorageLock's one object,
    engine/locks/storage.py).

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
        # Continuity (`hold`, `follows`: LockProvider) is this object's own: a fast
        # re-acquire follows its last hold. `known_dead` (a restarted coordinator: a lease
        # of its own identity is its fenced predecessor's) is taken over at once.
        self._observer = LeaseObserver(lease_s, monotonic)
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


def nothing_left() -> None:
    """What is left to do after a release that leaves nothing to do (StoredLease)."""
