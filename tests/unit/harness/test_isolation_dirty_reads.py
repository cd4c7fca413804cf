"""Isolation catches dirty reads that later commit: a read at point in time T that returned
rows of an instant completing after T is a violation, not only rows of an instant that never
completes. Reads record their point in time (`read_at`) and the instants their rows came from;
readers record a failed read as evidence instead of dying."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from engine.config import TableConfig
from engine.table import Table
from harness.checks import fingerprint, isolation
from harness.history import HistoryWriter, read_events
from harness.pipeline.events import SCHEMA
from harness.workload import readers
from harness.workload.readers import ReaderThread
from harness.workload.reads import perform_read


def rows(ids: range) -> pa.Table:
    n = len(ids)
    return pa.Table.from_arrays(
        [
            pa.array(list(ids), pa.int64()),
            pa.array(list(ids), pa.int64()),
            pa.array(np.zeros(n)),
            pa.array(np.zeros(n, np.int32)),
            pa.array(np.zeros(n, np.int64)),
            pa.array([b""] * n, pa.binary()),
        ],
        schema=SCHEMA,
    )


def new_table(tmp_path: Path) -> Table:
    return Table.create(str(tmp_path / "t"), TableConfig(file_groups=2), SCHEMA, max_skew_ms=0)


def commit(table: Table, ids: range) -> tuple[str, str]:
    """(requested, completion) time of a new instant writing `ids`."""
    instant = table.start_instant()
    completed = table.commit(instant, table.write_files(instant, rows(ids), op="insert"))
    return instant.requested_time, completed


def completions(table: Table) -> dict[str, str]:
    """What the checker gets from the final timeline: requested -> completion time."""
    timeline = table.timeline.reload()
    return {i.requested_time: i.completion_time for i in timeline.completed(True)}


class ListingReader:
    """The classic isolation bug: a reader that lists the table's storage instead of asking
    the timeline which files are committed, so it returns an inflight instant's rows."""

    def __init__(self, table: Table) -> None:
        self.table, self.timeline = table, table.timeline

    def snapshot(self, columns: list[str], with_meta: bool) -> pa.Table:
        self.table.timeline.reload()
        files = [self.table.catalog.read(f.name) for f in self.table.data_files()]
        return pa.concat_tables(files).select(columns)

    def as_of(self, as_of: str, columns: list[str], with_meta: bool) -> pa.Table:
        return self.snapshot(columns, with_meta)


def test_a_dirty_read_whose_instant_completes_later_is_invalid(tmp_path: Path) -> None:
    table = new_table(tmp_path)
    first, first_done = commit(table, range(10))
    inflight = table.start_instant()
    table.write_files(inflight, rows(range(10, 15)), op="insert")

    leaky = ListingReader(table)
    dirty_snapshot = perform_read(leaky, "snapshot")  # type: ignore[arg-type]
    dirty_as_of = perform_read(leaky, "as_of", as_of=first_done)  # type: ignore[arg-type]
    clean = perform_read(table, "snapshot")
    assert dirty_snapshot["read_at"] == clean["read_at"] == first_done
    assert dirty_snapshot["instants"] == {first: 10, inflight.requested_time: 5}
    assert clean["instants"] == {first: 10}

    # The instant completes after the reads: it is committed in the final timeline, so
    # "rows of an instant that never completed" alone would call these reads clean.
    table.commit(inflight, table.write_files(inflight, rows(range(10, 15)), op="insert"))
    final = completions(table)
    assert final[inflight.requested_time] > first_done
    repeated = [perform_read(table, "as_of", as_of=first_done)]

    r = isolation([clean, dirty_snapshot, dirty_as_of], repeated, final)
    assert r.verdict == "invalid"
    assert r.evidence["uncommitted_seen"]["count"] == 0
    late = r.evidence["completed_after_read"]
    assert late["count"] == 2
    assert {(i["read_kind"], i["instant"], i["rows"]) for i in late["items"]} == {
        ("snapshot", inflight.requested_time, 5),
        ("as_of", inflight.requested_time, 5),
    }
    assert late["items"][0]["completed"] == final[inflight.requested_time]
    assert late["items"][0]["read_at"] == first_done

    # The same reads through the engine's own reader are clean.
    assert isolation([clean], [], final).verdict == "valid"


def test_a_dirty_read_whose_instant_never_completes_is_invalid(tmp_path: Path) -> None:
    table = new_table(tmp_path)
    commit(table, range(10))
    inflight = table.start_instant()
    table.write_files(inflight, rows(range(10, 15)), op="insert")
    dirty = perform_read(ListingReader(table), "snapshot")  # type: ignore[arg-type]
    table.rollback(inflight)
    r = isolation([dirty], [], completions(table))
    assert r.verdict == "invalid" and r.evidence["uncommitted_seen"]["count"] == 1
    assert r.evidence["uncommitted_seen"]["items"][0]["instant"] == inflight.requested_time


def test_reads_record_the_point_in_time_they_read_at(tmp_path: Path) -> None:
    table = new_table(tmp_path)
    assert perform_read(table, "snapshot")["read_at"] is None  # nothing completed yet
    first, t1 = commit(table, range(5))
    second, t2 = commit(table, range(5, 10))
    assert perform_read(table, "snapshot")["read_at"] == t2
    as_of = perform_read(table, "as_of", as_of=t1)
    assert (as_of["read_at"], as_of["instants"]) == (t1, {first: 5})
    pull = perform_read(table, "incremental", begin=t1, end=t2)
    assert (pull["read_at"], pull["instants"]) == (t2, {second: 5})
    # Every real read is judged and clean (the as-of read and the pull repeat identically).
    repeated = [
        perform_read(table, "as_of", as_of=t1),
        perform_read(table, "incremental", begin=t1, end=t2),
    ]
    reads = [perform_read(table, "snapshot"), as_of, pull]
    assert isolation(reads, repeated, completions(table)).verdict == "valid"


def synthetic(read_kind: str, instants: dict[str, int], **where: Any) -> dict[str, Any]:
    n = sum(instants.values())
    return {
        "reader": "reader:0",
        "read_kind": read_kind,
        "rows": n,
        "fingerprint": fingerprint(list(range(n))),
        "instants": instants,
        **where,
    }


@pytest.mark.parametrize(
    ("read", "violation"),
    [
        # read at t2 but i3 completed at t3
        (synthetic("snapshot", {"i1": 1, "i3": 1}, read_at="t2"), "completed_after_read"),
        # nothing had completed when it read
        (synthetic("snapshot", {"i1": 1}, read_at=None), "completed_after_read"),
        # a pull (t2, t3] returned i1, which completed at t1: before its window
        (
            synthetic("incremental", {"i1": 1, "i3": 1}, begin="t2", end="t3", read_at="t3"),
            "pulled_before_begin",
        ),
    ],
    ids=["after-snapshot", "before-any-completion", "pull-before-begin"],
)
def test_rows_outside_the_reads_window_are_invalid(read: dict, violation: str) -> None:
    final = {"i1": "t1", "i2": "t2", "i3": "t3"}
    r = isolation([read], [read], final)
    assert r.verdict == "invalid" and r.evidence[violation]["count"] == 1


# --- readers record failures ----------------------------------------------------------------


def test_a_reader_records_a_failed_read_and_keeps_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = new_table(tmp_path)
    commit(table, range(5))
    history = HistoryWriter(tmp_path / "history", "runner")
    reader = ReaderThread(0, table.path, 1.0, history, bank=False, seed=1)
    real = readers.perform_read

    def as_of_fails(table: Table, read_kind: str, **kwargs: Any) -> dict[str, Any]:
        if read_kind == "as_of":
            raise OSError("storage timed out")
        return real(table, read_kind, **kwargs)

    monkeypatch.setattr(readers, "perform_read", as_of_fails)
    reader.read_once()
    reader.read_once()  # the pull was done: only a snapshot and an as-of read again
    reader.table.close()
    events = read_events(tmp_path / "history")
    done = [(e["kind"], e["read_kind"]) for e in events]
    assert done == [
        ("read", "snapshot"),
        ("read_error", "as_of"),
        ("read", "incremental"),
        ("read", "snapshot"),
        ("read_error", "as_of"),
    ]
    error = next(e for e in events if e["kind"] == "read_error")
    assert error["reader"] == "reader:0" and error["error"] == "OSError: storage timed out"
    assert error["as_of"]

    # The check counts the failures; the as-of reads never succeeded: unknown, not valid.
    reads = [e for e in events if e["kind"] == "read"]
    failed = [e for e in events if e["kind"] == "read_error"]
    repeated = [perform_read(table, "incremental", begin=None, end=reads[1]["end"])]
    r = isolation(reads, repeated, completions(table), failed)
    assert r.verdict == "unknown" and r.evidence["failed_reads"]["count"] == 2


def test_a_reader_failing_outside_any_read_records_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = new_table(tmp_path)
    commit(table, range(5))
    history = HistoryWriter(tmp_path / "history", "runner")
    reader = ReaderThread(0, table.path, 0.01, history, bank=False, seed=1)
    called = threading.Event()

    def broken() -> None:
        reader.stop_event.set()  # one round only
        called.set()
        raise RuntimeError("reader bug")

    monkeypatch.setattr(reader, "read_once", broken)
    reader.start()
    assert called.wait(30)
    reader.stop()  # joins: the failure is recorded by then
    [error] = read_events(tmp_path / "history")
    assert (error["kind"], error["read_kind"], error["error"]) == (
        "read_error",
        None,
        "RuntimeError: reader bug",
    )
