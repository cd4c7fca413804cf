"""The table lock's protocol, and the in-process lock.

Every provider serialises threads of one process first (a local mutex) and then, for the
shared kinds, other processes. What a shared provider gives the table
(engine/table/table.py, engine/table/fencing.py) is declared on LockProvider with the
default of a provider that has no such feature, so callers never probe for it.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Self

from engine.errors import LockTimeoutError

DEFAULT_TIMEOUT_S = 60.0

# A lock's record as JSON: {state: held | free, owner, token, ...} (the lease register's
# versions, the storage lock object, ZooKeeper's holder record, the service's lease).
Record = dict[str, Any]


def default_owner() -> str:
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


class LockProvider:
    """A table lock. `with lock:` acquires with `timeout_s` and releases.

    Features with defaults (a provider that has one overrides it):
    * `token`: the fencing token of the current hold (unique, never reused by another
      holder, increasing from holder to holder); None while not held, or for a lock
      without fencing (every holder in one process).
    * `fence_domain`: the fence domain the current hold's grant lives in; None: the
      table's own (a coordinator's lock service names its epoch's, so the next epoch
      seals it: engine/locks/service_rpc.py).
    * `hold` / `follows`: continuity, what a table may trust of its caches: `hold` names
      this hold (unique in the lock's records); `follows` names the hold right before it
      if nobody held the lock in between (a fast re-acquire), else None.
    * `known_dead`: set by a holder that knows when a lease's holder is dead (a restarted
      stream coordinator, engine/stream/table_port.py); providers whose waiters can then
      take over at once consult it (StoredLease, ZooKeeperLock), others ignore it.
    * `suspend_renewal(bool)`, for fault injection: a stopped holder renews nothing.
    * `successor(token)`: who took the lock after the hold `token`; None while it is the
      newest, or when the provider cannot tell.
    """

    holder_id: str
    timeout_s: float = DEFAULT_TIMEOUT_S
    token: object = None
    hold: int | None = None
    follows: int | None = None
    known_dead: Callable[[Record], bool] | None = None

    @property
    def fence_domain(self) -> str | None:
        return None

    @property
    def holder(self) -> str | None:
        """Who holds the lock now (None if nobody does, or if the provider cannot tell)."""
        return None

    def acquire(self, timeout_s: float | None = None) -> None:
        raise NotImplementedError

    def release(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Stop what runs in the background (the lock object is not used afterwards)."""

    def suspend_renewal(self, suspended: bool) -> None:
        """Fault injection: stop (or resume) keeping the lease alive; nothing to stop here."""

    def successor(self, token: object) -> str | None:
        return None

    def __enter__(self) -> Self:
        self.acquire(self.timeout_s)
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


@dataclass
class _Slot:
    mutex: threading.Lock
    holder: str | None = None


class InProcessLock(LockProvider):
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
