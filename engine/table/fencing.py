"""Fencing: a zombie never reaches the timeline, and an instant completes at most once.

Why check-then-act is not enough. A coordinator that checks its epoch, then sleeps through
the TrueTime wait, then writes its completed instant can be paused between the check and
the write; its successor takes over meanwhile, and the resumed zombie writes anyway. The
same holds for a lock holder whose lease ran out while it was paused. The check has to be
part of the write. Storage offers no "write if the epoch record still says e", so the
engine builds one from two POSIX facts (engine/storage.py):

* a file can be created in a directory only while that directory exists; `rmdir` works
  only on an empty directory, and once it succeeded nothing can ever be created in it,
  not even by a process that resolved the path before (the kernel marks it dead);
* `link(2)` creates a name only if it is absent.

Grants. Every hold of the table lock opens a grant directory
`.hoodie/.fence/<domain>/<lock token>/`: the domain is `e<epoch>` for a stream
coordinator (`epoch_scope`) and `w` for other writers. Every timeline file a holder
writes (requested, inflight, completed; the claim of an instant it rolls back) is first
*staged* in its grant directory (write a temp file there, link it to its final name
there) and then *published* (linked to its timeline name). Staging is the decision; it
succeeds only while the grant directory is alive.

Sealing. Whoever takes over seals the stale grants: list the grant, publish every staged
file in it (decisions made before the seal are honoured, exactly as if the old holder had
finished just before it stopped), delete half-written temps (no decision), `rmdir`; if a
new file appeared meanwhile, do it again. After the seal the old holder's staging fails
(the directory is dead) and so does its late publishing (the staged file is gone: the
sealer published or deleted it), so nothing it does afterwards reaches the timeline,
wherever it was paused: after a fencing check, inside the TrueTime wait, between staging
and publishing.
* A new coordinator creates `e<n+1>` exclusively (mkdir) and seals every older epoch: each
  grant inside it, then the domain directory itself, which makes the zombie's next grant
  (mkdir inside a dead domain) fail too.
* A lock waiter that takes over an expired lease (engine/lock.py) revokes its token: in
  every domain it creates a tombstone file at the grant's name, or, if the grant
  directory is there already, seals it. The holder's mkdir of its grant and the
  tombstone are both exclusive creates of one name: whichever comes second fails.

At most once. Publishing a completed instant first links the staged file to
`.hoodie/.fence/claims/<requested time>`: keyed by the requested time alone, so a second
completion of the same instant fails whatever its completion time, whoever tries. A
rollback of a pending instant claims it first too, so nothing completes it afterwards.
A claim holds the completed file's bytes, so the sealer can finish a claimed completion.

Limits. The atomicity rests on local (POSIX) storage. Object stores have no directories
and pyarrow.fs no conditional PUT, so there staging and claims are check-then-write, as
`Storage.put_if_absent` already is. Switches: `safety.fencing` turns grants, sealing and
claims off (the detection scenarios show the double commit); claims also need
`safety.put_if_absent`, since a claim is a put-if-absent of the completion.
"""

from __future__ import annotations

import contextlib
import json
import re
import uuid
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any

from engine.errors import FencedError, InstantClaimedError
from engine.storage import TEMP_PREFIX, Storage
from engine.timeline.active import TIMELINE_DIR
from engine.timeline.instant import parse_file_name

FENCE_DIR = ".hoodie/.fence"
CLAIMS_DIR = f"{FENCE_DIR}/claims"
WRITERS_DOMAIN = "w"
CLAIM_SUFFIX = ".claim"  # a staged claim without a timeline file (a rollback's)
_EPOCH_RE = re.compile(r"^e(\d+)$")
SeamHook = Callable[[str, dict[str, Any]], None]

# The domain of the calling thread's table operations (a coordinator's epoch); a Table
# shared by two coordinators (in tests) still fences each by its own epoch.
_scope: ContextVar[str | None] = ContextVar("fence_domain", default=None)


def epoch_domain(epoch: int) -> str:
    return f"e{epoch}"


@contextlib.contextmanager
def epoch_scope(epoch: int) -> Iterator[None]:
    """Table operations inside this block are fenced by coordinator epoch `epoch`."""
    token = _scope.set(epoch_domain(epoch))
    try:
        yield
    finally:
        _scope.reset(token)


def current_epoch(storage: Storage) -> int:
    """The newest coordinator epoch (-1 before any)."""
    epochs = [int(m.group(1)) for n in storage.list(FENCE_DIR) if (m := _EPOCH_RE.match(n))]
    return max(epochs, default=-1)


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
    sealer = Fence(storage, enabled=True, claims=True)
    for name in storage.list(FENCE_DIR):
        m = _EPOCH_RE.match(name)
        if m and int(m.group(1)) < epoch:
            sealer.seal_domain(name)
    return epoch


class Fence:
    """A table handle's fencing: grants per lock hold, staged timeline writes, claims."""

    def __init__(self, storage: Storage, *, enabled: bool, claims: bool) -> None:
        self.storage, self.enabled, self.claims = storage, enabled, enabled and claims
        self.domain = WRITERS_DOMAIN  # the default; a coordinator sets its epoch's
        self.grant: str | None = None  # the grant directory of the current lock hold
        self.hooks: list[SeamHook] = []  # seams for tests and fault injection
        self._made = False  # the grant directory exists
        self._claims_dir_made = False

    def _seam(self, point: str, **info: Any) -> None:
        for hook in self.hooks:
            hook(point, info)

    @property
    def token(self) -> str | None:
        """`<domain>/<lock token>` of the current hold (commit metadata carries it)."""
        return self.grant[len(FENCE_DIR) + 1 :] if self.grant else None

    # -- grants (the table lock is held) -----------------------------------------------

    def open(self, lock_token: object) -> None:
        """Name this lock hold's grant; it is made by the hold's first timeline write."""
        if not self.enabled:
            return
        domain = _scope.get() or self.domain
        token = str(lock_token) if lock_token is not None else uuid.uuid4().hex
        self.grant, self._made = f"{FENCE_DIR}/{domain}/{token}", False

    def _make_grant(self) -> None:
        """FencedError if the domain is sealed or the lease revoked (a tombstone at the
        grant's name): both checks are the exclusive create of the grant itself."""
        if self._made:
            return
        try:
            self.storage.create_dir(self.grant)
        except FileExistsError:
            raise FencedError(f"lock lease of {self.grant} was revoked: it ran out") from None
        except FileNotFoundError:
            domain = self.grant.split("/")[-2]
            if domain != WRITERS_DOMAIN:
                raise FencedError(
                    f"fence domain {domain} is sealed: a newer coordinator epoch took over"
                ) from None
            self.storage.makedirs(f"{FENCE_DIR}/{domain}")  # the shared domain, made once
            self.storage.create_dir(self.grant)
        self._made = True

    def close(self) -> None:
        """The hold ends: remove its grant (empty, unless a publish failed midway)."""
        grant, self.grant = self.grant, None
        if grant is not None and self._made:
            # Best effort: a grant left behind is never used again (its token is spent).
            with contextlib.suppress(OSError):
                if not self.storage.remove_dir(grant):
                    self.seal(grant)

    def revoke(self, lock_token: object) -> None:
        """A lock lease ran out and was taken over: nothing its holder stages lands now."""
        if not self.enabled or lock_token is None:
            return
        self.storage.makedirs(f"{FENCE_DIR}/{WRITERS_DOMAIN}")
        for domain in self.storage.list(FENCE_DIR):
            if domain == WRITERS_DOMAIN or _EPOCH_RE.match(domain):
                grant = f"{FENCE_DIR}/{domain}/{lock_token}"
                try:
                    self.storage.put_if_absent(grant, b"revoked", parents=False)  # tombstone
                except FileExistsError:
                    with contextlib.suppress(NotADirectoryError):  # a tombstone already
                        self.seal(grant)  # the holder's grant
                except FileNotFoundError:
                    pass  # a sealed epoch: nothing can be granted there any more

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
        """Publish what was staged in `grant`, drop half-written temps, remove it."""
        while True:
            for name in self.storage.list(grant):
                path = f"{grant}/{name}"
                if not name.startswith(TEMP_PREFIX):
                    self._publish_staged(path, name)
                self.storage.delete(path, missing_ok=True)
            if self.storage.remove_dir(grant):
                return

    def _publish_staged(self, staged: str, name: str) -> None:
        """A decision made before the seal: publish it unless a conflicting one won."""
        if name.endswith(CLAIM_SUFFIX):
            with contextlib.suppress(FileExistsError, FileNotFoundError):
                self.storage.link(staged, f"{CLAIMS_DIR}/{name[: -len(CLAIM_SUFFIX)]}")
            return
        instant = parse_file_name(name)
        if instant is None:
            return
        claim = instant.requested_time if instant.is_completed else None
        with contextlib.suppress(FencedError, InstantClaimedError, FileExistsError):
            self._publish(staged, f"{TIMELINE_DIR}/{name}", True, claim)

    # -- staged writes ---------------------------------------------------------------

    @property
    def active(self) -> bool:
        return self.enabled and self.grant is not None

    def write(self, path: str, data: bytes, *, exclusive: bool, claim: str | None = None) -> None:
        """Write a timeline file through this hold's grant. `exclusive`: FileExistsError if
        the name exists (else replace it). `claim`: the requested time this write
        completes (at most once: InstantClaimedError if someone else claimed it)."""
        name = path.rsplit("/", 1)[1]
        staged = f"{self.grant}/{name}"
        self._stage(staged, data, name)
        moved = False
        try:
            moved = self._publish(staged, path, exclusive, claim if self.claims else None)
        finally:
            if not moved:  # a leftover is re-published (a no-op) or dropped by a seal
                with contextlib.suppress(OSError):
                    self.storage.delete(staged, missing_ok=True)

    def claim(self, requested_time: str, record: dict[str, Any]) -> None:
        """Claim an instant without completing it (a rollback): nothing completes it after.
        An identical existing claim (a retried rollback) counts as ours."""
        if not (self.claims and self.grant):
            return
        name = f"{requested_time}{CLAIM_SUFFIX}"
        staged = f"{self.grant}/{name}"
        self._stage(staged, json.dumps(record, sort_keys=True).encode(), name)
        try:
            self._claim(staged, requested_time)
        finally:
            with contextlib.suppress(OSError):
                self.storage.delete(staged, missing_ok=True)

    def _stage(self, staged: str, data: bytes, name: str) -> None:
        self._seam("before_stage", name=name)
        self._make_grant()
        try:
            self.storage.put_if_absent(staged, data, parents=False)
        except FileNotFoundError:
            raise FencedError(f"{self.grant} is sealed: another holder took over") from None
        self._seam("after_stage", name=name)

    def _claim(self, staged: str, requested_time: str) -> None:
        target = f"{CLAIMS_DIR}/{requested_time}"
        if not self._claims_dir_made:
            self.storage.makedirs(CLAIMS_DIR)
            self._claims_dir_made = True
        try:
            self.storage.link(staged, target)
        except FileNotFoundError:
            raise FencedError(
                f"{self.grant} was sealed before {requested_time} was claimed"
            ) from None
        except FileExistsError:
            if not self._same(staged, target):
                raise InstantClaimedError(requested_time) from None
        self._seam("after_claim", requested_time=requested_time)

    def _publish(self, staged: str, path: str, exclusive: bool, claim: str | None) -> bool:
        """Publish a staged file; True if it was moved (not linked) there."""
        if claim:
            self._claim(staged, claim)
        # Link where the name must be new; after a claim (which already made the instant's
        # completion unique) or where replacing is asked for, move the staged file there.
        move = bool(claim) or not exclusive
        try:
            if move:
                self.storage.rename(staged, path)
            else:
                self.storage.link(staged, path)
        except FileNotFoundError:
            raise FencedError(f"{self.grant} was sealed before {path} was published") from None
        except FileExistsError:
            if not self._same(staged, path):
                raise
        self._seam("after_publish", path=path)
        return move

    def _same(self, a: str, b: str) -> bool:
        try:
            return self.storage.read_bytes(a) == self.storage.read_bytes(b)
        except FileNotFoundError:
            return False
