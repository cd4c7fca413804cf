"""Cleaning (engine/table/cleaning.py): KEEP_LATEST_COMMITS. Reads inside the retention
window never change; superseded slices before it are deleted; reads before it are out of
the window (not lost data); an interrupted clean is finished by the next one."""

from __future__ import annotations

import pytest

from engine.clock import AdjustableClock, SystemClock
from engine.config import TableConfig
from engine.table import Table, cleaning
from tests.unit.engine.engine_helpers import as_dict, rows


def _table(tmp_path, table_type: str = "cow") -> Table:
    path = str(tmp_path / table_type)
    config = TableConfig(table_type=table_type, file_groups=2)
    Table.create(path, config, rows([0]).schema, max_skew_ms=0).close()
    return Table.open(path, max_skew_ms=0)


def _upserts(table: Table, n: int) -> list[str]:
    """n commits rewriting the same keys (each supersedes the slices before it)."""
    done = []
    for k in range(n):
        t = table.start_instant()
        done.append(table.commit(t, table.write_files(t, rows([1, 2, 3], [k, k, k]))))
    return done


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_reads_inside_the_window_never_change_and_older_slices_go(tmp_path, table_type):
    table = _table(tmp_path, table_type)
    completions = _upserts(table, 5)
    if table_type == "mor":
        table.run_compaction(table.schedule_compaction())
        completions += _upserts(table, 2)
    before = {c: as_dict(table.as_of(c)) for c in completions}
    latest = as_dict(table.snapshot())
    done = cleaning.clean(table, retain_commits=2)
    assert done is not None and done.is_completed and done.action == "clean"
    boundary = cleaning.retained_from(table.reload())
    commits = [i for i in table.timeline.completed() if i.action != "clean"]
    assert boundary == commits[-2].completion_time
    deleted = cleaning.cleaned_files(table)
    assert deleted and not any(table.storage.exists(name) for name in deleted)
    assert as_dict(table.snapshot()) == latest
    for c in completions:
        if c >= boundary:
            assert cleaning.in_window(table, c)
            assert as_dict(table.as_of(c)) == before[c]  # inside the window: unchanged
        else:
            assert not cleaning.in_window(table, c)
    assert not cleaning.in_window(table, None)  # a pull from the start reaches before it
    assert not cleaning.latest_files(table.view()) & deleted


def test_nothing_to_clean_within_the_retention(tmp_path):
    table = _table(tmp_path)
    _upserts(table, 2)
    assert cleaning.clean(table, retain_commits=2) is None
    assert cleaning.retained_from(table) is None and cleaning.in_window(table, None)
    assert table.timeline.reload().pending("clean") == []


def _interrupt_a_clean(table: Table) -> None:
    """A clean that stops at its first data file's delete: left pending."""
    real_delete, calls = table.storage.delete, []

    def fail_first_data_file(path, missing_ok=False):
        if not path.startswith(".hoodie"):
            calls.append(path)
            if len(calls) == 1:
                raise OSError("injected: the cleaner stopped")
        real_delete(path, missing_ok=missing_ok)

    table.storage.delete = fail_first_data_file
    try:
        with pytest.raises(OSError, match="injected"):
            cleaning.clean(table, retain_commits=1)
    finally:
        table.storage.delete = real_delete


def test_an_interrupted_clean_is_finished_by_the_next(tmp_path):
    table = _table(tmp_path)
    _upserts(table, 4)
    _interrupt_a_clean(table)
    assert [i.action for i in table.timeline.reload().pending()] == ["clean"]
    an_hour_later = AdjustableClock(SystemClock())
    an_hour_later.set_offset_ms(3_600_000)  # every heartbeat long expired
    cleaner = Table.open(table.path, clock=an_hour_later, max_skew_ms=0)
    assert cleaner.rollback_failed_writes() == []  # failed-write cleaning leaves it
    cleaning.clean(table, retain_commits=1)
    assert table.timeline.reload().pending() == []
    assert not any(table.storage.exists(n) for n in cleaning.cleaned_files(table))
    assert as_dict(table.snapshot()) == {1: 3, 2: 3, 3: 3}


def test_a_reader_whose_timeline_saw_a_clean_pending_reads_its_plan_once_completed(tmp_path):
    """A reader loads the timeline while a clean is pending; the clean completes (its
    pending files removed) before the reader asks for the retention window. The reader
    gets the completed clean's plan instead of failing on the gone `.clean.requested`
    (a reader failed so in the nightly services suite: isolation and bank unknown)."""
    table = _table(tmp_path)
    _upserts(table, 4)
    _interrupt_a_clean(table)
    reader = Table.open(table.path, max_skew_ms=0, writer_id="reader")
    assert [i.action for i in reader.timeline.pending()] == ["clean"]  # loaded: pending
    cleaning.clean(table, retain_commits=1)  # the cleaner finishes: `.clean.requested` gone
    assert cleaning.retained_from(reader) == cleaning.retained_from(table) is not None
    assert reader.timeline.pending() == []
