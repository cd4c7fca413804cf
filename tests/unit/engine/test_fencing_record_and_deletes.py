"""Fencing beyond the timeline files (engine/table/fencing.py): the generation record
`.hoodie/.truetime`, every delete (a rollback's data files, a cleaner's planned files, a
finished instant's unlisted ones, archival's timeline files and merged runs), and the S3
grant's memory of its last write. A zombie coordinator resumed after its successor's
takeover, paused right before any of them, changes nothing; with fencing off it moves the
record back (reusing sequence numbers its successor handed out) or deletes files.

Every pause is forced at a named seam (tests/unit/engine/fencing_helpers.py: Takeover), on
each backend (a local folder, an S3 store)."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from engine.config import Safety
from engine.errors import FencedError
from engine.storage import Storage
from engine.stream.state import EpochStore
from engine.stream.table_port import enter_epoch
from engine.table import Table, cleaning
from engine.table.fence_domains import FENCE_DIR, epoch_scope
from engine.timeline.active import TIMELINE_DIR
from engine.timeline.archive import HISTORY_DIR
from engine.timeline.sequence import TRUETIME_FILE, decode_record
from tests.unit.engine.engine_helpers import rows
from tests.unit.engine.fencing_helpers import WAIT_S, Takeover, Zombie, new_table


@pytest.fixture
def path(storage_root) -> str:
    return new_table(storage_root)


def _record(table: Table) -> tuple[str, int | None]:
    last = decode_record(table.storage.read_bytes(TRUETIME_FILE), TRUETIME_FILE)
    return last.time, last.seq


def _pause_at_delete(world: Takeover, nth: int = 1, where: Callable[[str], bool] = bool) -> None:
    """Stop the zombie before its `nth` delete of a path `where` accepts."""
    seen = [0]

    def hook(point: str, info: dict) -> None:
        if point == "before_delete" and where(info["path"]):
            seen[0] += 1
            if seen[0] == nth:
                world.seam()

    world.zombie.fence.hooks.append(hook)


def _upserts(table: Table, n: int) -> None:
    """n commits rewriting the same keys: each supersedes the slices before it."""
    for k in range(n):
        t = table.start_instant()
        table.commit(t, table.write_files(t, rows([1, 2, 3], [k, k, k])))


@pytest.mark.parametrize("fencing", [True, False])
def test_a_zombie_paused_before_its_truetime_write_never_moves_the_record(path, fencing):
    """The zombie read the record (time, seq s) and stopped before writing s + 1; its
    successor took over and generated s + 1 and s + 2. Resumed, the zombie must not
    write s + 1 over s + 2 (the record moving back: numbers handed out twice)."""
    world = Takeover(path, Safety(fencing=fencing))
    world.as_zombie(world.zombie.start_instant)  # its grant is made: the paused write is staged
    world.pause_at("before_write", path_is=TRUETIME_FILE)
    world.start(world.zombie.start_instant)
    successor = world.take_over()

    def commit() -> None:
        t = successor.start_instant()  # takes the zombie's expired lease
        successor.commit(t, successor.write_files(t, rows([1])))

    world.as_successor(commit)
    theirs = _record(successor)
    error = world.resume()
    if fencing:
        assert isinstance(error, FencedError), error
        assert _record(successor) == theirs
    else:
        assert error is None
        assert _record(successor)[1] < theirs[1]  # the record moved back


@pytest.mark.parametrize("fencing", [True, False])
def test_a_zombie_rollback_paused_before_its_deletes_deletes_nothing(path, fencing):
    """The zombie planned the rollback of t and stopped before deleting t's data files; a
    successor took over. Resumed, it must delete nothing (before, it deleted every file
    and only then failed at its completion); the successor finishes the rollback."""
    world = Takeover(path, Safety(fencing=fencing))
    t = world.as_zombie(world.zombie.start_instant)
    files = [s.file_name for s in world.zombie.write_files(t, rows([7, 8]))]
    world.pause_at("before_delete")
    world.start(lambda: world.zombie.rollback(t))
    successor = world.take_over()
    world.as_successor(successor.start_instant)  # takes the zombie's expired lease
    error = world.resume()
    left = [f for f in files if successor.storage.exists(f)]
    if fencing:
        assert isinstance(error, FencedError), error
        assert left == files
        world.as_successor(successor.rollback_failed_writes)  # the plan stands: finished
        assert successor.timeline.reload().is_rolled_back(t.requested_time)
        assert [f for f in files if successor.storage.exists(f)] == []
    else:
        assert error is None
        assert left == []  # deleted by a holder that no longer held the lock


@pytest.mark.parametrize("fencing", [True, False])
def test_a_zombie_cleaner_deletes_nothing_once_its_epoch_is_sealed(path, fencing):
    """The zombie's table service planned a clean (under the lock) and deletes its files
    after the lock, through its epoch's deletes grant: stopped after its first delete, it
    deletes no other file once the successor sealed the epoch; the successor finishes the
    clean. Off: the zombie deletes them all after the takeover and completes its clean."""
    world = Takeover(path, Safety(fencing=fencing))
    world.as_zombie(lambda: _upserts(world.zombie, 3))
    _pause_at_delete(world, nth=2)
    world.start(lambda: cleaning.clean(world.zombie, retain_commits=1))
    successor = world.take_over()
    planned = sorted(cleaning.cleaned_files(successor.reload()))
    assert len(planned) >= 2
    world.as_successor(successor.start_instant)  # the successor holds the epoch and lock
    error = world.resume()
    left = [f for f in planned if successor.storage.exists(f)]
    cleans = [i for i in successor.timeline.reload().completed() if i.action == "clean"]
    if fencing:
        assert isinstance(error, FencedError), error
        assert left == planned[1:] and cleans == []  # only the delete made before the seal
        world.as_successor(lambda: cleaning.clean(successor, retain_commits=1))
        cleans = [i for i in successor.timeline.reload().completed() if i.action == "clean"]
        assert len(cleans) == 1  # the zombie's plan, finished by the successor
        assert [f for f in planned if successor.storage.exists(f)] == []
    else:
        assert error is None
        assert left == [] and len(cleans) == 1


@pytest.mark.parametrize("fencing", [True, False])
def test_a_zombie_finishing_its_commit_deletes_no_straggler_after_the_takeover(path, fencing):
    """After its completion (decided before the takeover) the zombie finishes the
    instant's markers: a straggler's file (marked, not in the commit) goes. Stopped before
    that delete and resumed after the takeover: the commit stands, the file stays (an
    orphan nobody reads) with fencing; off, the zombie deletes it after the takeover."""
    world = Takeover(path, Safety(fencing=fencing))
    zombie = world.zombie
    t = world.as_zombie(zombie.start_instant)
    stats = zombie.write_files(t, rows([1, 2]))
    stragglers: list[str] = []

    def straggler(point: str, _info: dict) -> None:  # a task attempt still writing
        if point == "after_checks" and not stragglers:
            stragglers.extend(s.file_name for s in zombie.write_files(t, rows([9])))

    zombie.fence.hooks.append(straggler)
    _pause_at_delete(world)
    world.start(lambda: zombie.commit(t, stats))
    successor = world.take_over()
    world.as_successor(successor.start_instant)
    error = world.resume()
    assert error is None and world.result  # the commit stands either way
    assert sorted(successor.reload().snapshot()["id"].to_pylist()) == [1, 2]
    left = [f for f in stragglers if successor.storage.exists(f)]
    assert stragglers and left == (stragglers if fencing else [])
    if fencing:
        assert set(stragglers) <= {f.name for f in successor.orphan_files()}


@pytest.mark.parametrize("fencing", [True, False])
@pytest.mark.parametrize("target", ["timeline", "run"])
def test_a_zombie_archiver_deletes_nothing_after_the_takeover(path, fencing, target):
    """Archival holds the lock: it removes the archived instants' completed files from the
    active timeline (`timeline`) and deletes the runs its LSM merge replaced (`run`, two
    runs per level here). Stopped before such a delete: fenced, nothing is deleted; off,
    the zombie deletes after its successor took over."""
    world = Takeover(path, Safety(fencing=fencing))
    zombie = world.zombie
    zombie.timeline.archive.batch = 2
    world.as_zombie(lambda: _upserts(zombie, 3))
    world.as_zombie(lambda: zombie.archive(keep=2))  # one level-0 run
    world.as_zombie(lambda: _upserts(zombie, 1))
    inside = HISTORY_DIR if target == "run" else TIMELINE_DIR
    doomed: list[str] = []

    def where(p: str) -> bool:
        doomed.append(p)
        return p.startswith(inside)

    _pause_at_delete(world, where=where)
    world.start(lambda: zombie.archive(keep=2))  # a second run: the two are merged
    successor = world.take_over()
    world.as_successor(successor.start_instant)
    error = world.resume()
    targets = [p for p in doomed if p.startswith(inside)]
    gone = [p for p in targets if not successor.storage.exists(p)]
    if fencing:
        assert isinstance(error, FencedError), error
        assert targets and gone == []
    else:
        assert error is None and targets and gone == targets
    # Whatever it did, every instant is readable from one timeline or the other.
    assert len(successor.timeline.reload().completed(include_archived=True)) == 4


def test_a_delete_outside_the_calling_threads_hold_goes_through_the_epochs_grant(path):
    """The table services share the coordinator's handle: while another thread holds the
    lock, a cleaner's delete goes through the handle's deletes grant in its epoch, not
    through that thread's hold (which can end, or be revoked, under it)."""
    epoch = EpochStore(Table.open(path).storage).advance()
    table = Table.open(path, max_skew_ms=0, writer_id="coordinator")
    enter_epoch(table, epoch)
    table.storage.write_bytes("a.bin", b"a")
    held, done = threading.Event(), threading.Event()

    def hold() -> None:
        with epoch_scope(epoch), table.locked():
            held.set()
            assert done.wait(WAIT_S)

    holder = Zombie(hold)
    holder.start()
    assert held.wait(WAIT_S)
    with epoch_scope(epoch):
        table.fence.delete("a.bin")
    done.set()
    assert holder.finish() is None
    assert not table.storage.exists("a.bin")
    grants = table.storage.list(f"{FENCE_DIR}/e{epoch}")
    assert [g for g in grants if g.startswith("deletes-")], grants
    table.close()


def test_a_staged_delete_is_refused_once_its_grant_is_sealed(path):
    """Storage.delete_staged on each backend: deletes while the grant is open, refuses
    (FileNotFoundError, the file kept) once it is sealed; a missing file is no error."""
    storage = Table.open(path).storage
    grant = f"{FENCE_DIR}/w/g1"
    storage.makedirs(f"{FENCE_DIR}/w")
    storage.create_dir(grant)
    storage.write_bytes("a.bin", b"a")
    storage.delete_staged(grant, "a.bin")
    assert not storage.exists("a.bin")
    storage.delete_staged(grant, "a.bin")  # gone already: no error
    assert storage.remove_dir(grant)
    storage.write_bytes("b.bin", b"b")
    with pytest.raises(FileNotFoundError):
        storage.delete_staged(grant, "b.bin")
    assert storage.read_bytes("b.bin") == b"b"


def test_a_seal_finishes_an_s3_delete_decided_before_it(s3_location, monkeypatch):
    """S3: the delete is decided by the grant's marker (a CAS); a holder stopped after that
    decision and before its DELETE has its delete finished by the sealer."""
    storage = Storage(s3_location())
    grant = f"{FENCE_DIR}/w/g1"
    storage.makedirs(f"{FENCE_DIR}/w")
    storage.create_dir(grant)
    storage.write_bytes("a.bin", b"a")
    objects = storage.backend.folders.objects
    with monkeypatch.context() as m:
        m.setattr(objects, "delete_if", lambda full, etag: None)  # stopped after deciding
        storage.delete_staged(grant, "a.bin")
    assert storage.exists("a.bin")
    assert storage.remove_dir(grant)  # the seal
    assert not storage.exists("a.bin")


@pytest.mark.parametrize("removed_by", ["archival", "rollback"])
def test_a_seal_never_brings_back_a_timeline_file_removed_since(path, removed_by):
    """A grant's last write is a create (a completed instant, an inflight one), published
    by its holder; another writer then archives the instant (its completed file leaves the
    active timeline) or rolls it back (its pending files go); then the grant is sealed (the
    holder closes, or a successor takes over). On S3 the grant's marker remembered that
    write, and a seal published it again: an archived instant back in the active timeline,
    a rolled-back one pending again. Locally a published temp is no longer in the grant."""
    a = Table.open(path, max_skew_ms=0, writer_id="a")
    t = a.start_instant()
    if removed_by == "archival":
        a.commit(t, a.write_files(t, rows([1])))
    b = Table.open(path, max_skew_ms=0, writer_id="b")
    if removed_by == "archival":
        assert b.archive(keep=0) == 1
    else:
        assert b.rollback(t) is not None

    def files_of_t() -> list[str]:
        prefixes = (f"{t.requested_time}.", f"{t.requested_time}_")
        return [n for n in b.storage.list(TIMELINE_DIR) if n.startswith(prefixes)]

    assert files_of_t() == []
    a.close()  # seals its grant
    assert files_of_t() == []
    state = b.reload().timeline
    assert state.get(t.requested_time) is None or state.get(t.requested_time).is_completed
