"""Fencing: a zombie never reaches the timeline, and an instant completes at most once.

Why check-then-act is not enough. A coordinator that checks its epoch, then sleeps through
the TrueTime wait, then writes its completed instant can be paused between the check and
the write; its successor takes over meanwhile, and the resumed zombie writes anyway. The
same holds for a lock holder whose lease ran out while it was paused. The check has to be
part of the write. Storage offers no "write if the epoch record still says e", so the
engine builds one from two POSIX facts (engine/storage/local.py):

* a file can be created in a directory only while that directory exists; `rmdir` works
  only on an empty directory, and once it succeeded nothing can ever be created in it,
  not even by a process that resolved the path before (the kernel marks it dead);
* `link(2)` creates a name only if it is absent.

Grants. A lock token's writes go through a grant directory
`.hoodie/.fence/<domain>/<lock token>/`: the domain is `e<epoch>` for a stream
coordinator (`epoch_scope`, engine/table/fence_domains.py) and `w` for other writers.
Every timeline file a holder writes (requested, inflight, completed; the claim of an
instant it rolls back) and the generation record `.hoodie/.truetime`
(engine/timeline/sequence.py: its time and sequence number must never move back or be
reused) is written as a temp file inside its grant and then linked (renamed, for a
replace) to its name (`Storage.put_staged`, the write's one storage operation). The link
succeeds only while the temp is still in the grant. Deletes go the same way
(`Fence.delete`, `Storage.delete_staged`): the file is moved into the grant, then
deleted; the move fails once the grant is dead. That covers a rollback's data files and
archival's (the active timeline's archived files, merged runs) in their lock hold, and
outside any hold a cleaner's planned files and the files a finished instant does not
keep (engine/table/markers.py): those go through a grant of the handle's own in its
coordinator epoch (`deletes-<id>`), which the next epoch seals like every other.

Sealing (engine/table/sealing.py). Whoever takes over seals the stale grants: it moves
every temp out of the grant (after which the old holder's link fails), publishes a
completion whose claim the old holder had already made (that commit was decided before
the takeover: see "At most once"), drops the rest, and removes the directory with
`rmdir`; if a new temp appeared meanwhile, it does it again. After the seal the old
holder can neither write a temp (the directory is dead) nor link one, so nothing it does
afterwards reaches the timeline, wherever it was paused: after a fencing check, inside
the TrueTime wait, between its writes.
* A new coordinator creates `e<n+1>` exclusively (mkdir) and seals every older epoch: each
  grant inside it, then the domain directory itself, which makes the zombie's next grant
  (mkdir inside a dead domain) fail too.
* A lock waiter that takes over an expired lease (engine/locks/file.py: FileLock), and the
  coordinator's LockService before it grants an expired lease to anyone, revoke the old
  token: in every domain a tombstone file at the grant's name, or, if the grant
  directory is there already, its seal. The holder's mkdir of its grant and the
  tombstone are both exclusive creates of one name: whichever comes second fails.
* A restarted coordinator finds a lease of its own identity: its predecessor's, dead or
  a zombie of the epoch it just sealed, so it takes it over at once instead of after a
  whole lease (engine/stream/table_port.py: enter_epoch).

At most once. Publishing a completed instant first links its temp file to
`.hoodie/.fence/claims/<requested time>`: keyed by the requested time alone, so a second
completion of the same instant fails whatever its completion time, whoever tries. A
rollback of a pending instant claims it first too, so nothing completes it afterwards.
A claim holds the completed file's bytes, so the sealer can finish a claimed completion
(and must: nothing else could complete that instant any more).

Claims are at most once per live token, not forever. A rollback's claim records its lock
token. A rollback paused after its claim must not leave the instant pending for good: a
later lock holder (the lock excludes the claimer, so its hold ended, by release or by a
takeover) seals that token and takes the claim over. A rollback takes it over as its own;
a completion voids it only if the rollback never put its plan on the timeline (it deletes
data files only after that, so none is gone), else the rollback stands and is finished by
whoever cleans failed writes. Voiding moves the claim into the voider's own grant, a
fenced move, so a holder that was itself taken over voids nothing.

Object stores. S3 has no directories, rename or link; there the same calls keep these
guarantees with conditional writes (engine/storage/s3_folders.py, `Folders`): a grant or domain is
a marker object changed only by compare-and-swap, a staged write is decided by a CAS on
its grant's marker (refused once sealed) and then published with If-None-Match PUTs (a
staged delete: decided the same way, then a DELETE If-Match the etag it decided on), and
a seal finishes the decided write before it marks the grant sealed.

Switches: `safety.fencing` turns grants, sealing and claims off (the detection scenarios
show the double commit); claims also need
`safety.put_if_absent`, since a claim is a put-if-absent of the completion.
"""

from __future__ import annotations

import contextlib
import json
import threading
import uuid
from collections.abc import Callable
from typing import Any

from engine.errors import FencedError, InstantClaimedError
from engine.storage import TEMP_PREFIX, Storage
from engine.table.fence_domains import (
    CLAIMS_DIR,
    FENCE_DIR,
    WRITERS_DOMAIN,
    epoch_of,
    scoped_domain,
)
from engine.table.operations import Seam, current_operation
from engine.table.sealing import Sealer

SeamHook = Callable[[str, dict[str, Any]], None]


class Fence(Sealer):
    """A table handle's fencing: a grant per lock token, fenced timeline writes, claims.

    A grant is made by its token's first write and kept while the lock hands out the same
    token (FileLock keeps it while nobody else took the lock), so an undisturbed writer
    pays for it once."""

    def __init__(self, storage: Storage, *, enabled: bool, claims: bool) -> None:
        super().__init__(storage)
        self.enabled, self.claims = enabled, enabled and claims
        self.domain = WRITERS_DOMAIN  # the default; a coordinator sets its epoch's
        self.grant: str | None = None  # the grant of the current lock hold
        self.hooks: list[SeamHook] = []  # seams for tests and fault injection
        # A completion found its instant claimed: may that claim be voided? (the table's
        # rollback.release_abandoned_claim; it voids it if so)
        self.on_claimed: Callable[[str], bool] | None = None
        self._made: str | None = None  # the grant directory this handle made last
        self._holder: int | None = None  # the thread in the current lock hold
        self._deleters: dict[str, str] = {}  # domain -> this handle's deletes grant there
        self._mutex = threading.Lock()
        self._claims_dir_made = False

    def seam(self, point: Seam, **info: Any) -> None:
        """Call the seam hooks (the timeline's unfenced writes and the TrueTime wait too);
        `operation` in their info names the table operation running in this thread
        (engine/table/operations.py; engine/table/fault_points.py names the point)."""
        info["operation"] = current_operation()
        for hook in self.hooks:
            hook(point, info)

    @property
    def token(self) -> str | None:
        """`<domain>/<lock token>` of the current hold (commit metadata carries it)."""
        return self.grant[len(FENCE_DIR) + 1 :] if self.grant else None

    @property
    def active(self) -> bool:
        return self.enabled and self.grant is not None

    # -- grants (the table lock is held) -----------------------------------------------

    def open(self, lock_token: object, lock_domain: str | None = None) -> None:
        """A lock hold begins: name its grant (made by its first write). A hold that
        names its own domain (`lock_domain`: a coordinator's lock service,
        engine/locks/service_rpc.py) puts the grant there, so the next epoch seals it."""
        if not self.enabled:
            return
        domain = scoped_domain() or lock_domain or self.domain
        token = str(lock_token) if lock_token is not None else uuid.uuid4().hex
        self.grant, self._holder = f"{FENCE_DIR}/{domain}/{token}", threading.get_ident()
        if self._made is not None and self._made != self.grant:
            made, self._made = self._made, None
            self._remove(made)  # the token changed: the old grant is spent

    def end(self) -> None:
        """A lock hold ends (its grant stays for the token's next hold)."""
        self.grant, self._holder = None, None

    def close(self) -> None:
        """Remove the grants this handle made (best effort: a spent grant is never used)."""
        with self._mutex:
            made = [g for g in (self._made, *self._deleters.values()) if g is not None]
            self._made, self._deleters = None, {}
        for grant in made:
            self._remove(grant)

    def _remove(self, grant: str) -> None:
        with contextlib.suppress(OSError):
            if not self.storage.remove_dir(grant):
                self.seal(grant)

    def _make_grant(self) -> str:
        """The current hold's grant, made on first use. FencedError if the domain is sealed
        or the lease revoked (a tombstone at the grant's name): both checks are the
        exclusive create of the grant itself."""
        grant = self.grant
        if grant is None:
            raise FencedError("no lock hold: nothing goes through a grant")
        if self._made == grant:
            return grant
        try:
            self.storage.create_dir(grant)
        except FileExistsError:
            raise FencedError(f"lock lease of {grant} was revoked: it ran out") from None
        except FileNotFoundError:
            domain = grant.split("/")[-2]
            if domain != WRITERS_DOMAIN:
                raise FencedError(
                    f"fence domain {domain} is sealed: a newer coordinator epoch took over"
                ) from None
            self.storage.makedirs(f"{FENCE_DIR}/{domain}")  # the shared domain, made once
            self.storage.create_dir(grant)
        self._made = grant
        return grant

    # -- taking over (the seals themselves: engine/table/sealing.py) -------------------

    def revoke(self, lock_token: object) -> None:
        """A lock lease ran out and was taken over: nothing its holder writes lands now."""
        if not self.enabled or lock_token is None:
            return
        self.storage.makedirs(f"{FENCE_DIR}/{WRITERS_DOMAIN}")
        for domain in self.storage.list(FENCE_DIR):
            if domain == WRITERS_DOMAIN or epoch_of(domain) is not None:
                self.seal_token(f"{domain}/{lock_token}")

    # -- fenced writes ---------------------------------------------------------------

    def put(self, path: str, data: bytes, *, exclusive: bool, claim: str | None = None) -> None:
        """A timeline-side write (timeline files, `.hoodie/.truetime`): through this hold's
        grant while fencing is on in a lock hold (`write`), else a plain write after the
        same seam (fault injection)."""
        if self.active:
            self.write(path, data, exclusive=exclusive, claim=claim)
            return
        self.seam(Seam.BEFORE_WRITE, path=path)
        if exclusive:
            self.storage.put_if_absent(path, data)
        else:
            self.storage.write_bytes(path, data)

    def delete(self, path: str) -> None:
        """Delete a data file (a rollback's, a cleaner's, a finished instant's unlisted one)
        or an archived timeline file, decided through a grant: FencedError once it is
        sealed, so a holder that was taken over, or a coordinator whose epoch was sealed,
        deletes nothing; a delete decided before the seal is finished by the sealer.
        Missing: no error.

        In a lock hold (of the calling thread) the hold's grant. Outside one (a cleaner
        deletes after its plan's hold, a committer after its completion's) the handle's
        deletes grant in its coordinator epoch, made on first use and kept until close:
        the epoch's seal seals it. Plain without fencing, and outside a hold of a writer
        without an epoch: no lease fences it then (its deletes are of files its decided
        plan or commit named, which nothing writes again)."""
        self.seam(Seam.BEFORE_DELETE, path=path)
        grant = self._delete_grant()
        if grant is None:
            self.storage.delete(path, missing_ok=True)
            return
        try:
            self.storage.delete_staged(grant, path)
        except FileNotFoundError:
            raise FencedError(f"{grant} is sealed: another holder took over") from None

    def _delete_grant(self) -> str | None:
        if not self.enabled:
            return None
        if self.grant is not None and self._holder == threading.get_ident():
            return self._make_grant()
        domain = scoped_domain() or self.domain
        if domain == WRITERS_DOMAIN:
            return None
        with self._mutex:
            grant = self._deleters.get(domain)
            if grant is None:
                grant = f"{FENCE_DIR}/{domain}/deletes-{uuid.uuid4().hex[:12]}"
                try:
                    self.storage.create_dir(grant)
                except FileNotFoundError:
                    raise FencedError(
                        f"fence domain {domain} is sealed: a newer coordinator epoch took over"
                    ) from None
                self._deleters[domain] = grant
        return grant

    def write(self, path: str, data: bytes, *, exclusive: bool, claim: str | None = None) -> None:
        """Write a timeline file through this hold's grant. `exclusive`: FileExistsError if
        the name exists (else replace it). `claim`: the requested time this write
        completes (at most once: InstantClaimedError if someone else claimed it)."""
        claim_path = f"{CLAIMS_DIR}/{claim}" if claim and self.claims else None
        try:
            self._put(path, data, claim_path, replace=not exclusive)
        except InstantClaimedError:
            # A rollback of a holder that lost the lock claimed it: void if it never
            # planned (engine/table/rollback.py), else the rollback stands.
            on_claimed = self.on_claimed
            if claim is None or claim_path is None or on_claimed is None or not on_claimed(claim):
                raise
            self._put(path, data, claim_path, replace=not exclusive)

    def claim(self, requested_time: str, record: dict[str, Any]) -> None:
        """Claim an instant without completing it (a rollback): nothing completes it after.

        The claim carries this hold's token. A rollback claim of another token is taken
        over: its holder no longer holds the lock (we do), so it is sealed (nothing it
        does lands any more) and the claim becomes ours; a paused rollback cannot keep
        its instant pending forever. A claim without a token (older tables) counts as
        ours; a completion claim raises InstantClaimedError."""
        if not (self.claims and self.grant):
            return
        data = json.dumps({**record, "token": self.token}, sort_keys=True).encode()
        path = f"{CLAIMS_DIR}/{requested_time}"
        try:
            self._put(path, data, None, replace=False)
        except InstantClaimedError:
            held = self.read_claim(requested_time)
            if held is None or held.get("action") != record.get("action"):
                raise
            if held.get("token") in (None, self.token):
                return
            self.seal_token(str(held["token"]))
            self.void_claim(requested_time, held)
            self._put(path, data, None, replace=False)

    def read_claim(self, requested_time: str) -> dict[str, Any] | None:
        """The record of a claim made without a completion (a rollback's), else None (no
        claim, or a completion's: the completed file's bytes)."""
        try:
            record = json.loads(self.storage.read_bytes(f"{CLAIMS_DIR}/{requested_time}"))
        except (FileNotFoundError, ValueError, UnicodeDecodeError):
            return None
        return record if isinstance(record, dict) and "action" in record else None

    def void_claim(self, requested_time: str, held: dict[str, Any]) -> None:
        """Drop a claim `held` made under another lock token, whose holder the caller
        sealed (`seal_token`: nothing it does lands any more) while this hold holds the
        lock. The claim is moved into this hold's grant, a fenced move: it fails once this
        hold was sealed in turn, so only a live holder voids a claim. InstantClaimedError
        if the claim changed meanwhile (it is put back)."""
        grant = self._make_grant()
        path = f"{CLAIMS_DIR}/{requested_time}"
        moved = f"{grant}/{TEMP_PREFIX}{uuid.uuid4().hex[:12]}-void"
        try:
            self.storage.rename(path, moved)
        except FileNotFoundError:
            if self.storage.exists(path):  # our grant is gone: we were taken over
                raise FencedError(f"{grant} is sealed: another holder took over") from None
            return  # voided meanwhile
        try:
            if json.loads(self.storage.read_bytes(moved)) != held:
                with contextlib.suppress(FileExistsError):
                    self.storage.link(moved, path)
                raise InstantClaimedError(requested_time)
        finally:
            self.storage.delete(moved, missing_ok=True)

    def _put(self, path: str, data: bytes, claim: str | None, *, replace: bool) -> None:
        self.seam(Seam.BEFORE_WRITE, path=path)
        grant = self._make_grant()
        if (claim or path).startswith(CLAIMS_DIR) and not self._claims_dir_made:
            self.storage.makedirs(CLAIMS_DIR)
            self._claims_dir_made = True
        try:
            self.storage.put_staged(grant, path, data, claim=claim, replace=replace)
        except FileNotFoundError:
            raise FencedError(f"{grant} is sealed: another holder took over") from None
        except FileExistsError as e:
            if e.filename is not None and e.filename.startswith(self.storage.full_path(CLAIMS_DIR)):
                raise InstantClaimedError(e.filename.rsplit("/", 1)[-1]) from None
            raise
        self.seam(Seam.AFTER_WRITE, path=path)
