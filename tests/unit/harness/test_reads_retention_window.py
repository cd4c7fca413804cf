"""Reads and the cleaner's retention window (engine/table/cleaning.py): a time travel to a
cleaned slice is out of the window, never lost data. Readers stay inside the window; the
end-of-run repeat skips reads a clean moved out of it, and isolation counts them apart."""

from __future__ import annotations

import random
from typing import Any

from engine.table import Table, cleaning
from harness.checks import isolation
from harness.history import HistoryWriter, read_events
from harness.runner.check_inputs import _isolation_inputs
from harness.runner.final_state import FinalState, retention_of
from harness.workload import readers
from harness.workload.readers import ReaderThread
from harness.workload.reads import perform_read, sweep_reads
from tests.unit.harness.test_isolation_dirty_reads import new_table, rows


def _rewrites(table: Table, n: int) -> list[str]:
    """n commits upserting the same ids (each supersedes the slices before it)."""
    out = []
    for _ in range(n):
        instant = table.start_instant()
        out.append(table.commit(instant, table.write_files(instant, rows(range(4)))))
    return out


def _final(table: Table, retain_commits: int = 2) -> FinalState:
    timeline = table.timeline.reload()
    instants = [
        {
            "requested": i.requested_time,
            "completed": i.completion_time,
            "state": "completed",
            "rolled_back": False,
        }
        for i in timeline.completed()
    ]
    window = retention_of(table, retain_commits)  # the judge's, under the tests' retention
    return FinalState(read_rows=table.snapshot, table=table, instants=instants, retention=window)


def test_reads_a_clean_moved_out_of_the_window_are_not_compared(tmp_path):
    table = new_table(tmp_path)
    completions = _rewrites(table, 5)
    reads = [{"kind": "read", **perform_read(table, "as_of", as_of=c)} for c in completions]
    reads.append(
        {"kind": "read", **perform_read(table, "incremental", begin=None, end=completions[-1])}
    )
    cleaning.clean(table, retain_commits=2)
    boundary = cleaning.retained_from(table.reload())
    inside = [c for c in completions if c >= boundary]
    assert len(inside) == 2
    got, repeated, completed, outside = _isolation_inputs(reads, _final(table), is_bank=False)
    assert [r["as_of"] for r in repeated] == inside  # repeated, and they must not change
    assert len(outside) == 4  # three older as-of reads and the pull from the start
    result = isolation(got, repeated, completed, (), outside)
    assert result.verdict == "valid", result.evidence
    assert result.evidence["out_of_window"] == 4
    # Without the window the same reads are `not repeated`: never valid.
    assert isolation(got, repeated, completed).verdict != "valid"


def test_a_reader_travels_only_inside_the_window(tmp_path, monkeypatch):
    table = new_table(tmp_path)
    _rewrites(table, 5)
    cleaning.clean(table, retain_commits=2)
    boundary = cleaning.retained_from(table.reload())
    history = HistoryWriter(tmp_path / "history", "runner")
    reader = ReaderThread(0, table.path, 1.0, history, bank=False, seed=3)
    for _ in range(6):
        reader.read_once()
    real = readers.perform_read

    def cleaned_meanwhile(table: Table, read_kind: str, **kwargs: Any) -> dict[str, Any]:
        if read_kind == "as_of":  # a clean advanced past its point while it read
            _rewrites(table, 3)
            cleaning.clean(table, retain_commits=1)
            raise FileNotFoundError("a cleaned base file")
        return real(table, read_kind, **kwargs)

    monkeypatch.setattr(readers, "perform_read", cleaned_meanwhile)
    reader.read_once()
    reader.table.close()
    events = read_events(tmp_path / "history")
    as_of = [e for e in events if e.get("read_kind") == "as_of"]
    assert [e["kind"] for e in as_of] == ["read"] * 6 + ["read_out_of_window"]
    assert all(e["as_of"] >= boundary for e in as_of)
    pulls = [e for e in events if e.get("read_kind") == "incremental"]
    assert pulls and pulls[0]["begin"] == boundary  # the first pull starts at the window
    assert not [e for e in events if e["kind"] == "read_error"]


def test_the_final_sweep_stays_inside_the_window(tmp_path):
    table = new_table(tmp_path)
    _rewrites(table, 6)
    cleaning.clean(table, retain_commits=2)
    boundary = cleaning.retained_from(table.reload())
    fresh = Table.open(table.path)  # no cached copies of the cleaned files
    window = retention_of(fresh, retain_commits=2)  # the judge's, from the commits
    assert window.start == boundary  # the same boundary the cleaner chose
    reads = sweep_reads(fresh, random.Random(1), window.start)  # a cleaned slice would raise
    points = [r["as_of"] for r in reads if r["read_kind"] == "as_of"]
    assert points and min(points) >= boundary
    assert all(r["begin"] >= boundary for r in reads if r["read_kind"] == "incremental")
