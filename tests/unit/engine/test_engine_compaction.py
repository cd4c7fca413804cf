"""MOR compaction and completion-time slicing (on: no loss; off: the 0.x rule loses a log)."""

from __future__ import annotations

import pytest
from engine_helpers import as_dict, rows

from engine.config import Safety, TableConfig
from engine.errors import EngineError
from engine.table import Table

MOR = TableConfig(table_type="mor", file_groups=1)


def _log_inflight_across_compaction_schedule(make_table, slicing: bool):
    safety = Safety(completion_time_slicing=slicing)
    t = make_table(MOR, safety=safety)
    with t.transaction() as tx:
        tx.write(rows([1, 2]))
    writer = make_table(safety=safety)
    inflight = writer.start_instant()
    stats = writer.write_files(inflight, rows([3], [30]))
    compaction = t.schedule_compaction()  # scheduled while the log write is inflight
    assert compaction is not None and compaction.requested_time > inflight.requested_time
    writer.commit(inflight, stats)  # completes after the compaction was scheduled
    before = as_dict(t.snapshot())
    t.run_compaction(compaction)
    return t, before


def test_completion_time_slicing_keeps_late_log_after_compaction(make_table):
    t, before = _log_inflight_across_compaction_schedule(make_table, slicing=True)
    assert before == {1: 10, 2: 20, 3: 30}
    assert as_dict(t.snapshot()) == {1: 10, 2: 20, 3: 30}
    assert as_dict(Table.open(t.path).snapshot()) == {1: 10, 2: 20, 3: 30}


def test_requested_time_slicing_loses_late_log_after_compaction(make_table):
    t, before = _log_inflight_across_compaction_schedule(make_table, slicing=False)
    assert before == {1: 10, 2: 20, 3: 30}  # fine until the compaction's base is visible
    assert as_dict(t.snapshot()) == {1: 10, 2: 20}  # the committed row 3 is lost


def test_mor_upserts_deletes_and_compaction(make_table):
    t = make_table(TableConfig(table_type="mor", file_groups=3))
    with t.transaction() as tx:
        tx.write(rows(range(10)))
    with t.transaction() as tx:
        tx.write(rows([1, 2], [100, 200]))
        tx.write(rows([3, 4]), op="delete")
    expected = {i: i * 10 for i in range(10) if i not in (3, 4)} | {1: 100, 2: 200}
    assert as_dict(t.snapshot()) == expected
    c = t.schedule_compaction()
    done = t.run_compaction(c)
    assert as_dict(t.snapshot()) == expected
    assert t.schedule_compaction() is None  # nothing left to compact
    with t.transaction() as tx:
        tx.write(rows([5], [555]))
    assert as_dict(t.snapshot()) == expected | {5: 555}
    assert as_dict(t.as_of(done)) == expected
    # Compaction rewrites rows but is not a change: incremental pulls skip it.
    assert t.incremental(c.requested_time, done).num_rows == 0


def test_as_of_is_stable_across_compaction_and_archive(make_table):
    t = make_table(TableConfig(table_type="mor", file_groups=2))
    marks = []
    for n in range(6):
        with t.transaction() as tx:
            tx.write(rows([n, n + 1], [n, n]))
        marks.append(tx.completion_time)
    answers = {m: t.as_of(m).sort_by("id") for m in marks}
    pending = t.schedule_compaction()
    with t.transaction() as tx:  # completes while the compaction is pending
        tx.write(rows([0], [-1]))
    marks.append(tx.completion_time)
    answers[marks[-1]] = t.as_of(marks[-1]).sort_by("id")
    t.run_compaction(pending)
    assert t.archive(keep=2) > 0
    reopened = Table.open(t.path)
    for m, answer in answers.items():
        assert reopened.as_of(m).sort_by("id").equals(answer), m
        assert t.as_of(m).sort_by("id").equals(answer), m


def test_compaction_is_for_mor_only(make_table):
    t = make_table(TableConfig(table_type="cow"))
    with pytest.raises(EngineError, match="mor"):
        t.schedule_compaction()
