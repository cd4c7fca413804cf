"""Lock providers: in-process, a lease file on the table's storage, and a lease service.

Every provider serialises threads of one process first (a local mutex) and then, for the
shared kinds, other processes. Leases make a crashed holder's lock breakable.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from engine.clock import Clock, SystemClock
from engine.errors import LockLostError, LockTimeoutError

if TYPE_CHECKING:
    from engine.storage import Storage

DEFAULT_TIMEOUT_S = 60.0


def default_owner() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


class LockProvider(Protocol):
    holder_id: str

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


class FileLock(_LockBase):
    """A lease file on the table's storage created put-if-absent: {owner, expires_ms}.

    A holder renews every lease_s/3. A lock whose lease expired (its holder crashed or
    stalled) is broken by renaming it aside, checking it is the stale one, and deleting it.
    """

    def __init__(
        self,
        storage: Storage,
        path: str = ".hoodie/.lock",
        holder_id: str | None = None,
        lease_s: float = 10.0,
        clock: Clock | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        renew: bool = True,
    ) -> None:
        self.storage, self.path, self.lease_s = storage, path, lease_s
        self.holder_id, self.clock = holder_id or default_owner(), clock or SystemClock()
        self.timeout_s = timeout_s
        self._mutex = threading.Lock()  # threads of this process
        self._renew_lock = threading.Lock()  # renewal vs release
        self._content: bytes | None = None
        self._renewer = _Renewer(self.renew, lease_s / 3) if renew else None

    def _lease_bytes(self) -> bytes:
        expires = self.clock.now_ms() + int(self.lease_s * 1000)
        token = uuid.uuid4().hex[:8]  # tells two leases of one owner apart
        return json.dumps({"owner": self.holder_id, "expires_ms": expires, "token": token}).encode()

    def read_lease(self) -> dict | None:
        try:
            return json.loads(self.storage.read_bytes(self.path))
        except FileNotFoundError:
            return None
        except ValueError:
            return {"owner": "?", "expires_ms": 0}  # torn lease file: treat as expired

    @property
    def holder(self) -> str | None:
        lease = self.read_lease()
        return None if lease is None else lease.get("owner")

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
        content = self._lease_bytes()
        try:
            self.storage.put_if_absent(self.path, content)
        except FileExistsError:
            self._break_if_expired()
            return False
        self._content = content
        return True

    def _break_if_expired(self) -> None:
        try:
            seen = self.storage.read_bytes(self.path)
        except FileNotFoundError:
            return
        try:
            expires = json.loads(seen)["expires_ms"]
        except (ValueError, KeyError, TypeError):
            expires = 0
        if self.clock.now_ms() <= expires:
            return
        aside = f"{self.path}.broken-{uuid.uuid4().hex[:8]}"
        try:
            self.storage.rename(self.path, aside)
        except FileNotFoundError:
            return
        taken = self.storage.read_bytes(aside)
        if taken != seen:
            # Someone re-acquired between our read and the rename: give the lease back.
            with contextlib.suppress(FileExistsError):
                self.storage.put_if_absent(self.path, taken)
        self.storage.delete(aside, missing_ok=True)

    def renew(self) -> None:
        with self._renew_lock:
            if self._content is None:
                return
            try:
                current = self.storage.read_bytes(self.path)
            except FileNotFoundError:
                current = None
            if current != self._content:
                self._content = None
                raise LockLostError(f"lease {self.path} of {self.holder_id} was taken over")
            content = self._lease_bytes()
            self.storage.write_bytes(self.path, content)
            self._content = content

    def close(self) -> None:
        """Stop the renewal thread (the lock object is not used afterwards)."""
        if self._renewer:
            self._renewer.close()

    def release(self) -> None:
        if self._renewer:
            self._renewer.stop()
        with self._renew_lock:
            try:
                if (
                    self._content is not None
                    and self.storage.read_bytes(self.path) == self._content
                ):
                    self.storage.delete(self.path, missing_ok=True)
            except OSError:
                pass  # no longer renewed: the lease runs out by itself
            finally:
                self._content = None
                self._mutex.release()


@dataclass
class Lease:
    owner: str
    token: int
    expires_ms: int


class LockService:
    """In-memory named leases; a coordinator serves this over RPC to remote writers.

    Tokens increase strictly across all grants, so they double as fencing tokens.
    """

    def __init__(self, clock: Clock | None = None) -> None:
        self.clock = clock or SystemClock()
        self._leases: dict[str, Lease] = {}
        self._lock = threading.Lock()
        self._tokens = itertools.count(1)

    def acquire(self, name: str, owner: str, lease_s: float) -> int | bool:
        """A token, or False if someone else holds an unexpired lease.

        Re-acquiring by the current owner refreshes and returns its token, so an RPC retried
        after a lost reply is harmless.
        """
        now = self.clock.now_ms()
        with self._lock:
            lease = self._leases.get(name)
            if lease is not None and lease.expires_ms >= now and lease.owner != owner:
                return False
            if lease is not None and lease.owner == owner and lease.expires_ms >= now:
                lease.expires_ms = now + int(lease_s * 1000)
                return lease.token
            token = next(self._tokens)
            self._leases[name] = Lease(owner, token, now + int(lease_s * 1000))
            return token

    def renew(self, name: str, token: int, lease_s: float) -> bool:
        now = self.clock.now_ms()
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
            if lease is None or lease.expires_ms < self.clock.now_ms():
                return None
            return Lease(lease.owner, lease.token, lease.expires_ms)


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
                self.token = int(token)
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

    def release(self) -> None:
        self._renewer.stop()
        token, self.token = self.token, None
        try:
            if token is not None:
                self.client.release(self.name, token)
        finally:
            self._mutex.release()
