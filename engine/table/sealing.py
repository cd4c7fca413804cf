"""Taking over (engine/table/fencing.py, "Sealing"): a successor seals a stale grant, a
whole fence domain or one lock token's hold, so nothing its old holder staged lands any
more; a new coordinator epoch seals every older one."""

from __future__ import annotations

import contextlib
import re
import uuid

from engine.storage import TEMP_PREFIX, Storage
from engine.table.fence_domains import CLAIMS_DIR, FENCE_DIR, current_epoch, epoch_domain, epoch_of
from engine.timeline.active import TIMELINE_DIR
from engine.timeline.instant import parse_file_name

_TOKEN_RE = re.compile(r"^(w|e\d+)/[A-Za-z0-9_-]+$")  # `<domain>/<lock token>`


def advance_epoch(storage: Storage) -> int:
    """Take the next epoch (an exclusive mkdir: two starters never share one) and seal every
    older one, so no older coordinator's staged write succeeds from now on."""
    storage.makedirs(FENCE_DIR)
    epoch = current_epoch(storage) + 1
    while True:
        try:
            storage.create_dir(f"{FENCE_DIR}/{epoch_domain(epoch)}")
            break
        except FileExistsError:
            epoch += 1
    sealer = Sealer(storage)
    for name in storage.list(FENCE_DIR):
        older = epoch_of(name)
        if older is not None and older < epoch:
            sealer.seal_domain(name)
    return epoch


class Sealer:
    """Seals grants on `storage` (the base of a table handle's Fence)."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    def seal_domain(self, domain: str) -> None:
        """Seal every grant of `domain`, then the domain itself (retried while new grants
        appear)."""
        path = f"{FENCE_DIR}/{domain}"
        while True:
            for name in self.storage.list(path):
                try:
                    self.seal(f"{path}/{name}")
                except NotADirectoryError:
                    self.storage.delete(f"{path}/{name}", missing_ok=True)  # a tombstone
            if self.storage.remove_dir(path):
                return

    def seal(self, grant: str) -> None:
        """Take every temp out of `grant`, finish the claimed completions among them, and
        remove the grant."""
        while True:
            for name in self.storage.list(grant):
                taken = f"{FENCE_DIR}/taken-{uuid.uuid4().hex[:12]}"
                try:
                    self.storage.rename(f"{grant}/{name}", taken)
                except FileNotFoundError:
                    continue  # its writer finished (or dropped) it meanwhile
                try:
                    self._finish_claimed(taken, name)
                finally:
                    self.storage.delete(taken, missing_ok=True)
            if self.storage.remove_dir(grant):
                return

    def seal_token(self, token: str) -> None:
        """Fence one hold, `<domain>/<lock token>`: a tombstone at its grant's name, or the
        grant sealed if it was made (a sealed domain needs nothing). A malformed token
        (from a damaged claim) names no grant."""
        if not _TOKEN_RE.match(token):
            return
        grant = f"{FENCE_DIR}/{token}"
        try:
            self.storage.put_if_absent(grant, b"revoked", parents=False)
        except FileExistsError:
            with contextlib.suppress(NotADirectoryError):  # a tombstone already
                self.seal(grant)
        except FileNotFoundError:
            pass  # a sealed epoch: nothing can be granted there any more

    def _finish_claimed(self, taken: str, name: str) -> None:
        """Publish a completion whose claim its writer had already made."""
        final = name[len(TEMP_PREFIX) :].split("-", 1)[-1]  # .tmp-<hex>-<name>
        instant = parse_file_name(final)
        if instant is None or not instant.is_completed:
            return
        claim = f"{CLAIMS_DIR}/{instant.requested_time}"
        if self._same(taken, claim):
            with contextlib.suppress(FileExistsError):
                self.storage.link(taken, f"{TIMELINE_DIR}/{final}")

    def _same(self, a: str, b: str) -> bool:
        try:
            return self.storage.read_bytes(a) == self.storage.read_bytes(b)
        except FileNotFoundError:
            return False
