"""Fencing beyond the timeline files (engine/table/fencing.py): the generation record
`.hoodie/.truetime` and a rollback's data-file deletes. A holder that was taken over,
paused right before either, changes nothing when it resumes; with fencing off it moves the
record back (reusing sequence numbers its successor handed out) or deletes files.

Every pause is forced at a named seam (tests/unit/engine/test_engine_fencing.py: Seam),
on each backend (a local folder, an S3 store)."""

from __future__ import annotations

import pytest

from engine.config import Safety
from engine.errors import FencedError
from engine.storage import Storage
from engine.stream.state import EpochStore
from engine.table.fencing import FENCE_DIR, epoch_scope
from engine.timeline.sequence import TRUETIME_FILE, decode_record
from tests.unit.engine.engine_helpers import rows
from tests.unit.engine.test_engine_fencing import WAIT_S, Seam, Zombie, _open, path  # noqa: F401


def _record(table) -> tuple[str, int | None]:
    last = decode_record(table.storage.read_bytes(TRUETIME_FILE), TRUETIME_FILE)
    return last.time, last.seq


def _pause_at(table, seam: Seam, point: str, *, path_is: str | None = None) -> None:
    table.fence.hooks.append(
        lambda p, info: p == point and (path_is is None or info.get("path") == path_is) and seam()
    )


@pytest.mark.parametrize("fencing", [True, False])
def test_a_zombie_paused_before_its_truetime_write_never_moves_the_record(path, fencing):  # noqa: F811
    """The zombie read the record (time, seq s) and stopped before writing s + 1; its
    successor took over and generated s + 1 and s + 2. Resumed, the zombie must not
    write s + 1 over s + 2 (the record moving back: numbers handed out twice)."""
    safety = Safety(fencing=fencing)
    epochs = EpochStore(_open(path, safety, paused=False, name="probe").storage)
    old = epochs.advance()
    zombie = _open(path, safety, paused=True, name="zombie")
    with epoch_scope(old):
        zombie.start_instant()  # its grant is made: the paused write is a staged one
    seam = Seam()
    _pause_at(zombie, seam, "before_write", path_is=TRUETIME_FILE)

    def create() -> object:
        with epoch_scope(old):
            return zombie.start_instant()

    z = Zombie(create)
    z.start()
    assert seam.reached.wait(WAIT_S)
    new = epochs.advance()
    successor = _open(path, safety, paused=False, name="successor")
    with epoch_scope(new):
        t = successor.start_instant()  # takes the zombie's expired lease
        successor.commit(t, successor.write_files(t, rows([1])))
    theirs = _record(successor)
    seam.go.set()
    error = z.finish()
    if fencing:
        assert isinstance(error, FencedError), error
        assert _record(successor) == theirs
    else:
        assert error is None
        assert _record(successor)[1] < theirs[1]  # the record moved back


@pytest.mark.parametrize("fencing", [True, False])
def test_a_zombie_rollback_paused_before_its_deletes_deletes_nothing(path, fencing):  # noqa: F811
    """The zombie planned the rollback of t and stopped before deleting t's data files; a
    successor took over. Resumed, it must delete nothing (before, it deleted every file
    and only then failed at its completion); the successor finishes the rollback."""
    safety = Safety(fencing=fencing)
    epochs = EpochStore(_open(path, safety, paused=False, name="probe").storage)
    old = epochs.advance()
    zombie = _open(path, safety, paused=True, name="zombie")
    with epoch_scope(old):
        t = zombie.start_instant()
    files = [s.file_name for s in zombie.write_files(t, rows([7, 8]))]
    seam = Seam()
    _pause_at(zombie, seam, "before_delete")

    def roll_back() -> object:
        with epoch_scope(old):
            return zombie.rollback(t)

    z = Zombie(roll_back)
    z.start()
    assert seam.reached.wait(WAIT_S)
    new = epochs.advance()
    successor = _open(path, safety, paused=False, name="successor")
    with epoch_scope(new):
        successor.start_instant()  # takes the zombie's expired lease
    seam.go.set()
    error = z.finish()
    left = [f for f in files if successor.storage.exists(f)]
    if fencing:
        assert isinstance(error, FencedError), error
        assert left == files
        with epoch_scope(new):
            successor.rollback_failed_writes()  # the plan stands: the successor finishes it
        assert successor.timeline.reload().is_rolled_back(t.requested_time)
        assert [f for f in files if successor.storage.exists(f)] == []
    else:
        assert error is None
        assert left == []  # deleted by a holder that no longer held the lock


def test_a_staged_delete_is_refused_once_its_grant_is_sealed(path):  # noqa: F811
    """Storage.delete_staged on each backend: deletes while the grant is open, refuses
    (FileNotFoundError, the file kept) once it is sealed; a missing file is no error."""
    storage = _open(path, Safety(), paused=False, name="probe").storage
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
    objects = storage._folders.objects
    with monkeypatch.context() as m:
        m.setattr(objects, "delete_if", lambda full, etag: None)  # stopped after deciding
        storage.delete_staged(grant, "a.bin")
    assert storage.exists("a.bin")
    assert storage.remove_dir(grant)  # the seal
    assert not storage.exists("a.bin")
