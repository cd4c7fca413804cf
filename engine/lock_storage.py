"""The `storage` lock provider: one lock object in the table's own storage, changed only
by conditional writes, as Apache Hudi 1.1's StorageBasedLockProvider does
(`.hoodie/.locks/table_lock.json`, taken and renewed by a conditional upsert on the
previous object's ETag, released by writing it "expired").

Every change is a compare-and-swap on the object's version (`Storage.read_versioned` /
`Storage.put_if_version`: If-Match on object storage), so of two writers that read the
same version only one changes it; renewal is the same CAS, so a holder that was paused
while its lease was taken over fails to renew instead of overwriting the new lease.

Where it differs from Hudi, and why. Hudi judges expiry on the wall clock (`validUntil`
plus a drift buffer); here a waiter judges it on its own monotonic clock (a held lease
unchanged for `lease_s` ran out: engine/lock.py LeaseObserver), so the clock-skew fault
cannot make a live lease look expired. And the record carries a fencing token, a counter
every new holder increments by its CAS: it increases from holder to holder and is never
handed out twice (engine/table/fencing.py names a hold's grant by it).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from engine.errors import LockLostError, LockTimeoutError
from engine.lock import DEFAULT_TIMEOUT_S, LeaseObserver, _LockBase, _Renewer, default_owner

if TYPE_CHECKING:
    from engine.storage import Storage

LOCK_FILE = ".hoodie/.locks/table_lock.json"

# A record: {"state": "held" | "free", "owner", "token": fencing token, "seq": writes so
# far}. `seq` makes every write's content (and so its version) new, and names a hold.
Record = dict[str, object]


class StorageLock(_LockBase):
    def __init__(
        self,
        storage: Storage,
        path: str = LOCK_FILE,
        holder_id: str | None = None,
        lease_s: float = 10.0,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        renew: bool = True,
        monotonic: Callable[[], float] = time.monotonic,
        on_takeover: Callable[[object], None] | None = None,
    ) -> None:
        self.storage, self.path, self.lease_s = storage, path, lease_s
        self.holder_id = holder_id or default_owner()
        self.timeout_s, self.on_takeover = timeout_s, on_takeover
        self.token: int | None = None  # the fencing token of the hold
        # Continuity, as FileLock: `hold` names this hold (its first seq), `follows` the
        # hold right before it if nobody took the lock in between.
        self.hold: int | None = None
        self.follows: int | None = None
        self._held: tuple[str, Record] | None = None  # (version, record) this holder wrote
        self._released: tuple[str, Record] | None = None  # the free record it wrote last
        self._observer = LeaseObserver(lease_s, monotonic)
        # As FileLock's: set by a holder that knows a lease's holder is dead (a restarted
        # coordinator: a lease of its own identity is its sealed predecessor's).
        self.known_dead: Callable[[Record], bool] | None = None
        self._mutex = threading.Lock()  # threads of this process
        self._renew_lock = threading.Lock()  # renewal vs release
        self._renewer = _Renewer(self.renew, lease_s / 3) if renew else None

    # -- the object ----------------------------------------------------------------------

    def read(self) -> tuple[str | None, Record | None]:
        """(version, record) of the lock object; (None, None) if it was never written."""
        try:
            data, version = self.storage.read_versioned(self.path)
        except FileNotFoundError:
            return None, None
        try:
            return version, json.loads(data)
        except ValueError:
            return version, {"state": "held", "owner": "?", "token": 0, "seq": 0}  # expires

    def _cas(self, version: str | None, record: Record) -> str | None:
        """Write `record` if the object is still at `version` (None: absent); its new
        version, or None if someone changed it first."""
        data = json.dumps(record, sort_keys=True).encode()
        if not self.storage.put_if_version(self.path, data, version):
            return None
        # put_if_version does not return the new version (S3's ETag): read it back; bytes
        # other than ours mean someone changed the object right after us.
        try:
            now, new = self.storage.read_versioned(self.path)
        except FileNotFoundError:
            return None
        return new if now == data else None

    # -- the lock --------------------------------------------------------------------------

    @property
    def holder(self) -> str | None:
        _, record = self.read()
        return None if record is None or record.get("state") != "held" else str(record["owner"])

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
        # Fast path: nobody wrote since this object's release, so its token was never
        # revoked and stays (a grant is made once per token).
        if self._released is not None:
            version, free = self._released
            self._released = None
            record = {**free, "state": "held", "seq": int(free["seq"]) + 1}
            new = self._cas(version, record)
            if new is not None:
                self._begin(new, record, follows=self.hold)
                return True
        version, current = self.read()
        held = current is not None and current.get("state") == "held"
        dead = held and self.known_dead is not None and self.known_dead(current)
        if held and not dead and not self._observer.expired(version):
            return False
        seq, token = (int(current["seq"]), int(current["token"])) if current else (0, 0)
        record = {"state": "held", "owner": self.holder_id, "token": token + 1, "seq": seq + 1}
        new = self._cas(version, record)
        if new is None:
            return False
        self._begin(new, record, follows=None)
        if held and self.on_takeover is not None:
            try:
                self.on_takeover(current.get("token"))
            except BaseException:
                self._give_back()
                raise
        return True

    def _begin(self, version: str, record: Record, follows: int | None) -> None:
        self._held = (version, record)
        self.token, self.hold, self.follows = int(record["token"]), int(record["seq"]), follows
        self._observer.reset()

    def renew(self) -> None:
        with self._renew_lock:
            if self._held is None:
                return
            version, record = self._held
            record = {**record, "seq": int(record["seq"]) + 1}
            new = self._cas(version, record)
            if new is None:
                self._held = None
                raise LockLostError(f"lease {self.path} of {self.holder_id} was taken over")
            self._held = (new, record)

    def _give_back(self) -> None:
        """Write the object free after our last write (nothing if it was taken meanwhile)."""
        held, self._held, self.token = self._held, None, None
        if held is not None:
            version, record = held
            free = {**record, "state": "free", "seq": int(record["seq"]) + 1}
            with contextlib.suppress(OSError):
                new = self._cas(version, free)
                if new is not None:
                    self._released = (new, free)

    def release(self) -> None:
        if self._renewer:
            self._renewer.stop()
        with self._renew_lock:
            try:
                self._give_back()  # not renewed any more: the lease runs out
            finally:
                self._mutex.release()

    def successor(self, token: object) -> str | None:
        """Who wrote the lock object after the hold `token`; None while it is the newest."""
        _, record = self.read()
        if record is None or token is None:
            return None
        if record.get("state") != "free" and record.get("token") == token:
            return None
        return str(record.get("owner"))

    def suspend_renewal(self, suspended: bool) -> None:
        """Fault injection: a stopped holder renews nothing (engine/lock.py FileLock)."""
        if self._renewer and self.token is not None:
            if suspended:
                self._renewer.stop()
            else:
                self._renewer.start()

    def close(self) -> None:
        if self._renewer:
            self._renewer.close()
