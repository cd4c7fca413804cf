"""Archival of an instant whose committer died between writing the completed file and
removing the pending files (engine/timeline/active.py: complete, remove_pending).

The completed state hides the leftover requested/inflight files. Archival used to delete
the completed file only, after which the leftovers read as a pending instant again: its
metadata read went to the active completed file that was gone (FileNotFoundError, found by
the coordinator-crash run on S3 with the storage lock), nothing could finish it (its
completion is claimed) and it blocked every later archival. The crash is forced: a
storage hook stops the committer at its first pending-file delete, as a SIGKILL would."""

from __future__ import annotations

import pytest

from engine.config import TableConfig
from engine.storage import Storage
from engine.table import Table, cleaning
from engine.timeline.active import TIMELINE_DIR
from engine.timeline.instant import Instant
from tests.unit.engine.engine_helpers import as_dict, rows


class Killed(BaseException):
    """The process died here (no handler of the engine's catches it)."""


def _kill_at_first_pending_delete(table: Table, action: str) -> None:
    # The inflight file name after its requested time (Hudi names a commit `<t>.inflight`).
    inflight = Instant("0", action, "inflight").file_name.removeprefix("0")

    def hook(op: str, full: str) -> None:
        if op == "delete" and full.endswith(inflight):
            table.storage.hooks.remove(hook)
            raise Killed(full)

    table.storage.hooks.append(hook)


def _open(root: str) -> Table:
    return Table.open(root, max_skew_ms=0, heartbeat_interval_s=0, heartbeat_expiry_s=0)


def _upserts(table: Table, n: int) -> None:
    for k in range(n):
        t = table.start_instant()
        table.commit(t, table.write_files(t, rows([1, 2, 3], [k, k, k])))


def _leftovers(root: str, t: str) -> list[str]:
    return [n for n in Storage(root).list(TIMELINE_DIR) if n.startswith(t)]


@pytest.mark.parametrize("action", ["clean", "commit"])
def test_archiving_an_instant_with_leftover_pending_files(storage_root, action):
    Table.create(storage_root, TableConfig(file_groups=2), rows([0]).schema, max_skew_ms=0)
    dying = _open(storage_root)
    _upserts(dying, 3)
    _kill_at_first_pending_delete(dying, action)
    with pytest.raises(Killed):
        if action == "clean":
            cleaning.clean(dying, retain_commits=1)
        else:
            t = dying.start_instant()
            dying.commit(t, dying.write_files(t, rows([1, 2, 3], [7, 7, 7])))
    # The successor: the completed file stands, the pending files are still there.
    table = _open(storage_root)
    died = table.timeline.reload().completed()[-1]
    assert died.action == action and len(_leftovers(storage_root, died.requested_time)) == 3
    assert table.timeline.pending() == []
    _upserts(table, 2)
    assert table.archive(keep=1) >= 1
    assert table.timeline.archive.get(died.requested_time) is not None
    assert _leftovers(storage_root, died.requested_time) == []

    reader = _open(storage_root)  # a fresh process: listing and archive only
    timeline = reader.timeline.reload()
    assert timeline.pending() == [] and timeline.get(died.requested_time).is_completed
    assert cleaning.retained_from(reader) is not None or action == "commit"
    assert reader.rollback_failed_writes() == []
    _upserts(reader, 1)
    cleaning.clean(reader, retain_commits=1)  # re-runs no pending clean, claims nothing
    assert reader.archive(keep=1) >= 1  # no phantom pending instant blocks archival
    assert as_dict(reader.snapshot()) == {1: 0, 2: 0, 3: 0}


def test_a_table_left_with_archived_leftovers_reads_them_as_completed(tmp_path):
    """A table archived before the fix: pending files of an archived instant are ignored."""
    root = str(tmp_path / "table")
    Table.create(root, TableConfig(file_groups=2), rows([0]).schema, max_skew_ms=0)
    dying = _open(root)
    _upserts(dying, 3)
    _kill_at_first_pending_delete(dying, "clean")
    with pytest.raises(Killed):
        cleaning.clean(dying, retain_commits=1)
    table = _open(root)
    done = table.timeline.reload().completed()[-1]
    storage = Storage(root)
    names = [done.pending_file(state) for state in ("requested", "inflight")]
    kept = {n: storage.read_bytes(f"{TIMELINE_DIR}/{n}") for n in names}
    _upserts(table, 2)
    assert table.archive(keep=1) >= 1 and table.timeline.archive.get(done.requested_time)
    for name, data in kept.items():  # as the old archival left them
        storage.write_bytes(f"{TIMELINE_DIR}/{name}", data)

    reader = _open(root)
    timeline = reader.timeline.reload()
    assert timeline.pending() == []
    assert timeline.get(done.requested_time).is_completed
    assert cleaning.retained_from(reader) is not None  # reads the archived clean's plan
