"""The `file` lock provider: a lease register of put-if-absent versions in the table's
storage (a StoredLease: engine/locks/lease.py)."""

from __future__ import annotations

import contextlib
import functools
import json
import uuid
from collections.abc import Callable

from engine.errors import LockLostError
from engine.locks.base import Record
from engine.locks.lease import StoredLease, nothing_left


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
