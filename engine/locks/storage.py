"""The `storage` lock provider: one lock object in the table's own storage, changed only
by conditional writes, as Apache Hudi 1.1's StorageBasedLockProvider does
(`.hoodie/.locks/table_lock.json`, taken and renewed by a conditional upsert on the
previous object's ETag, released by writing it "expired").

Every change is a compare-and-swap on the object's version (`Storage.read_versioned` /
`Storage.put_if_version`: If-Match on object storage), so of two writers that read the
same version only one changes it; renewal is the same CAS, so a holder that was paused
while its lease was taken over fails to renew instead of overwriting the new lease. A CAS
returns the object's new version (S3: the PUT's ETag), on which the holder's next one is
conditional: acquiring and renewing read nothing back.

Where it differs from Hudi, and why. Hudi judges expiry on the wall clock (`validUntil`
plus a drift buffer); here a waiter judges it on its own monotonic clock (a held lease
unchanged for `lease_s` ran out: engine/locks/lease.py LeaseObserver), so the clock-skew fault
cannot make a live lease look expired. And the record carries a fencing token, a counter
every new holder increments by its CAS: it increases from holder to holder and is never
handed out twice (engine/table/fencing.py names a hold's grant by it).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable

from engine.errors import LockLostError
from engine.locks.base import Record
from engine.locks.lease import StoredLease, nothing_left

LOCK_FILE = ".hoodie/.locks/table_lock.json"


class StorageLock(StoredLease):
    """A record: {"state": "held" | "free", "owner", "token": fencing token, "seq": writes
    so far}. `seq` makes every write's content (and so its version) new, and names a
    hold. Waiters' expiry, take-over and release: engine/locks/lease.py StoredLease."""

    default_path = LOCK_FILE
    # The hold's state (instance attributes once changed):
    token: int | None = None  # the fencing token of the hold
    _held: tuple[str, Record] | None = None  # (version, record) this holder wrote
    _released: tuple[str, Record] | None = None  # the free record it wrote last

    # -- the object ----------------------------------------------------------------------

    def read_record(self) -> tuple[str | None, Record | None]:
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
        return self.storage.put_if_version(self.path, data, version)

    # -- the lock --------------------------------------------------------------------------

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
        current_version, current = self.read_record()
        if not self._may_take(current_version, current):
            return False
        seq, token = (int(current["seq"]), int(current["token"])) if current else (0, 0)
        record = {"state": "held", "owner": self.holder_id, "token": token + 1, "seq": seq + 1}
        new = self._cas(current_version, record)
        if new is None:
            return False
        self._begin(new, record, follows=None)
        if current is not None and current.get("state") == "held":
            self._take_over(current)
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

    def _give_back(self) -> Callable[[], None]:
        """Write the object free after our last write; nothing is left to do after."""
        held, self._held, self.token = self._held, None, None
        if held is not None:
            version, record = held
            free = {**record, "state": "free", "seq": int(record["seq"]) + 1}
            with contextlib.suppress(OSError):
                new = self._cas(version, free)
                if new is not None:
                    self._released = (new, free)
        return nothing_left
