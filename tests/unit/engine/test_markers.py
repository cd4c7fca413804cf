"""Markers (engine/table/markers.py): after an instant completes, a listing of the table
folder shows exactly the files the commits list, whatever failed on the way (a failed
task attempt, a superseded eager flush, a write that died before its rename, an earlier
compaction run); rollback finds its files by markers; a late writer writes nothing; with
safety.markers off the leftovers stay, so a listing check can catch them."""

from __future__ import annotations

import pytest

from engine.config import Safety, TableConfig
from engine.errors import EngineError
from engine.storage import TEMP_PREFIX
from engine.table import Table
from engine.table.markers import MARKER_DIR, MarkerError, marker_dir
from tests.unit.engine.engine_helpers import as_dict, rows


def committed(table: Table) -> set[str]:
    table.timeline.reload()
    return {f.name for i in table.timeline.completed() for f in table.catalog.files_of(i)}


def listed(table: Table) -> set[str]:
    """What a reader that lists storage sees: every data file and every leftover temp."""
    names = table.storage.list("")
    return {f.name for f in table.data_files()} | {n for n in names if n.startswith(TEMP_PREFIX)}


def failed_attempt_then_retry(table: Table) -> tuple[str, list]:
    instant = table.start_instant()
    table.write_files(instant, rows(range(40)), write_token="0-0-0")  # the attempt that died
    stats = table.write_files(instant, rows(range(40)), write_token="0-0-1")
    return instant.requested_time, stats


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_a_failed_attempts_files_are_deleted_before_the_instant_completes(make_table, table_type):
    table = make_table(TableConfig(table_type=table_type, file_groups=4))
    t, stats = failed_attempt_then_retry(table)
    assert len(table.markers.files(t)) == 2 * len(stats)
    seen_at_completion: list[set[str]] = []
    complete = table.timeline.complete

    def spy(*args, **kwargs):
        seen_at_completion.append(listed(table))
        return complete(*args, **kwargs)

    table.timeline.complete = spy
    table.commit(t, stats)
    # Already at the completion point (before it), storage held only the commit's files.
    assert seen_at_completion == [{s.file_name for s in stats}]
    assert listed(table) == committed(table) == {s.file_name for s in stats}
    assert table.storage.list(MARKER_DIR) == []  # the marker directory went after completion
    assert as_dict(table.snapshot()) == {i: i * 10 for i in range(40)}


def test_a_superseded_eager_flush_is_deleted(make_table):
    table = make_table(TableConfig(file_groups=1))
    instant = table.start_instant()
    first = table.write_files(instant, rows(range(10)), write_token="0-0-0")
    second = table.write_files(instant, rows(range(10, 20)), write_token="0-1-0", prior=first)
    assert second[0].prev_file == first[0].file_name
    table.commit(instant, first + second)
    assert listed(table) == committed(table) == {second[0].file_name}
    assert as_dict(table.snapshot()) == {i: i * 10 for i in range(20)}


class _RenameDies:
    """A file system whose next move fails: the write dies between temp file and rename."""

    def __init__(self, inner) -> None:
        self.inner, self.armed = inner, True

    def move(self, src: str, dst: str) -> None:
        if self.armed and TEMP_PREFIX in src:
            self.armed = False
            raise OSError("the writer died before its rename")
        self.inner.move(src, dst)

    def __getattr__(self, name: str):
        return getattr(self.inner, name)


def test_a_write_that_died_before_its_rename_leaves_no_temp_file(make_table):
    table = make_table(TableConfig(file_groups=1))
    instant = table.start_instant()
    real = table.storage.filesystem
    table.storage.filesystem = _RenameDies(real)
    with pytest.raises(OSError):
        table.write_files(instant, rows(range(5)), write_token="0-0-0")
    table.storage.filesystem = real
    assert any(n.startswith(TEMP_PREFIX) for n in table.storage.list(""))
    stats = table.write_files(instant, rows(range(5)), write_token="0-0-1")
    table.commit(instant, stats)
    assert listed(table) == committed(table) == {stats[0].file_name}


def test_an_earlier_compaction_runs_files_are_deleted(make_table):
    table = make_table(TableConfig(table_type="mor", file_groups=2))
    for start in (0, 100):
        with table.transaction() as txn:
            txn.write(rows(range(start, start + 20)))
    compaction = table.schedule_compaction()
    puts = []

    def die_at_completion(op: str, path: str) -> None:
        if op == "put" and "/.hoodie/timeline/" in path:
            puts.append(path)
            if len(puts) == 2:  # 1: inflight, 2: completed
                raise OSError("the compaction runner died before completing")

    table.storage.hooks.append(die_at_completion)
    with pytest.raises(OSError):
        table.run_compaction(compaction)
    table.storage.hooks.remove(die_at_completion)
    first_run = set(table.markers.files(compaction.requested_time))
    assert first_run and first_run <= listed(table)
    table.run_compaction(compaction)
    assert not first_run & listed(table)
    assert listed(table) == committed(table)
    assert as_dict(table.snapshot()) == {i: i * 10 for i in [*range(20), *range(100, 120)]}


def test_rollback_deletes_the_files_its_markers_name_and_late_writes_fail(make_table):
    table = make_table(TableConfig(file_groups=2))
    with table.transaction() as txn:
        txn.write(rows(range(10)))
    before = listed(table)
    t, _ = failed_attempt_then_retry(table)
    table.rollback(t)
    assert listed(table) == before == committed(table)
    assert table.storage.list(MARKER_DIR) == []
    with pytest.raises(MarkerError, match="rolled back"):
        table.write_files(t, rows(range(5)), write_token="0-0-7")
    assert listed(table) == before


def test_a_writer_late_for_a_completed_instant_writes_nothing(make_table):
    table = make_table(TableConfig(file_groups=2))
    other = make_table()
    instant = table.start_instant()
    stats = table.write_files(instant, rows(range(10)))
    table.commit(instant, stats)
    with pytest.raises(EngineError, match="completed"):
        other.write_files(instant, rows(range(10, 20)), write_token="0-0-9")
    assert listed(table) == committed(table)


def test_a_committer_that_died_after_completing_leaves_markers_the_cleaner_finishes(
    make_table,
):
    table = make_table(TableConfig(file_groups=2))
    t, stats = failed_attempt_then_retry(table)
    table.markers.finish = lambda *a, **k: []  # the process dies right after completion
    table.commit(t, stats)
    del table.markers.finish
    assert table.storage.list(MARKER_DIR) == [t]
    table.rollback_failed_writes()
    assert table.storage.list(MARKER_DIR) == []
    assert listed(table) == committed(table)


def test_markers_off_leaves_the_failed_attempts_files_for_a_listing_to_see(make_table):
    table = make_table(TableConfig(file_groups=4), safety=Safety(markers=False))
    t, stats = failed_attempt_then_retry(table)
    table.commit(t, stats)
    orphans = listed(table) - committed(table)
    assert orphans and all("_0-0-0_" in name for name in orphans)
    assert not table.storage.exists(marker_dir(t))
    assert {f.name for f in table.orphan_files()} == orphans


def test_two_finishers_of_one_instant_both_succeed(make_table):
    """The committer and the cleaner's leftover sweep both finish an instant: the one
    that comes second finds the sealed directory gone by the time it removes it."""
    table = make_table(TableConfig(file_groups=2))
    t, stats = failed_attempt_then_retry(table)
    table.markers.finish = lambda *a, **k: []  # completion, the markers left to finish
    table.commit(t, stats)
    del table.markers.finish
    # The first finisher sealed the directory (its rename) and, right after the second
    # one listed it, removes it.
    sealed = f"{MARKER_DIR}/.sealed-{t}-first"
    table.storage.rename(marker_dir(t), sealed)
    full = table.storage.full_path(sealed)

    def first_finisher_removes_it(op: str, path: str) -> None:
        if op == "list" and path == full:
            table.storage.filesystem.delete_dir(full)

    table.storage.hooks.append(first_finisher_removes_it)
    table.markers.finish(t, [s.file_name for s in stats])
    assert table.storage.list(MARKER_DIR) == []
    assert listed(table) == committed(table)
