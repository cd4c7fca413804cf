"""Row-group flushes (WriterTask(row_group_flushes=True), COW inserts): each flush is a row
group of the task's one open file of the instant, closed and reported at the barrier in
the checkpoint's one event. The protocol's guarantees hold as with a file per flush: a
crash at any point of any flush, then a task retry or a global failover, leaves every
row exactly once and no file or temp file behind."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest
from stream_harness import Crash, StreamHarness, crash_at, ids

from engine.storage import TEMP_PREFIX
from engine.stream.transport.local import LocalClient
from engine.stream.writer import FAULT_POINTS, WriterTask
from engine.table.markers import MARKER_DIR


class CountingClient(LocalClient):
    events: list = []

    def send_event(self, event) -> None:
        CountingClient.events.append(event)
        super().send_event(event)


def leftovers(h: StreamHarness) -> list[str]:
    """Temp files anywhere in the table, and marker directories still there."""
    storage = h.table.storage
    temps = [p for p in storage.walk("") if p.rsplit("/", 1)[-1].startswith(TEMP_PREFIX)]
    return temps + storage.list(MARKER_DIR)


def test_one_file_and_one_event_per_task_and_checkpoint(tmp_path):
    CountingClient.events = []
    h = StreamHarness(str(tmp_path), row_group_flushes=True, client_factory=CountingClient)
    for _ in range(3):
        h.run_batch(rows_per_task=12)  # chunks of 4: row groups of 8 and 4 rows
    h.assert_exactly_once()
    commits = h.commits()
    assert [c["rows"] for c in commits] == [24] * 3
    assert all(c["files"] == 2 for c in commits)  # one file per task (a file per flush: 4)
    events = [e for e in CountingClient.events if not e.bootstrap]
    assert len(events) == 3 * 2 and all(e.last_batch for e in events)
    assert all(e.metadata["flushes"] == 2 and e.metadata["rows"] == 12 for e in events)
    flushes = [f for f in h.recorder.of_kind("flush") if f["task"] == 0]
    assert [(f["rows"], f["files"]) for f in flushes[:2]] == [(8, 0), (4, 1)]
    tl = h.table.timeline.reload()
    for instant in tl.completed():
        for f in h.table.catalog.files_of(instant):
            data = pq.ParquetFile(h.table.storage.full_path(f.name))
            assert data.metadata.num_row_groups == 2
    assert leftovers(h) == []


def test_other_writes_ignore_the_option(tmp_path):
    h = StreamHarness(str(tmp_path), row_group_flushes=True)
    h.start_batch()
    upsert = WriterTask(
        0, 0, -1, h.table, LocalClient(h.coordinator), write_batch_rows=5, row_group_flushes=True
    )
    assert h.writers[0].row_groups and not upsert.row_groups


def crash_writer_1(h: StreamHarness, b: int, at_barrier: bool) -> int:
    """Writer 1 crashes in its first flush: of 12 rows (its file open, unreported), or at
    the barrier of 4 (below the threshold: the barrier's flush is the only one). Returns
    the rows each writer was given."""
    rows = 4 if at_barrier else 12
    h.consume(0, ids(b, 0, rows))
    if not at_barrier:
        with pytest.raises(Crash):
            h.consume(1, ids(b, 1, rows))
        return rows
    h.consume(1, ids(b, 1, rows))
    h.writers[0].end_of_checkpoint()
    with pytest.raises(Crash):
        h.writers[1].end_of_checkpoint()
    return rows


@pytest.mark.parametrize("at_barrier", [False, True], ids=["between-flushes", "at-the-barrier"])
@pytest.mark.parametrize("point", FAULT_POINTS)
def test_a_crash_then_a_task_retry(tmp_path, point, at_barrier):
    h = StreamHarness(str(tmp_path), row_group_flushes=True)
    h.run_batch()
    b = h.start_batch(fault_hooks={1: crash_at(point)})
    rows = crash_writer_1(h, b, at_barrier)
    h.subtask_fails(1)
    h.consume(1, ids(b, 1, rows))
    h.checkpoint()
    h.checkpoint_complete(b)
    h.assert_exactly_once()
    assert h.table.orphan_files() == []
    assert leftovers(h) == []


@pytest.mark.parametrize("point", FAULT_POINTS)
def test_a_crash_between_flushes_then_a_global_failover(tmp_path, point):
    h = StreamHarness(str(tmp_path), row_group_flushes=True)
    h.run_batch()
    b = h.start_batch(fault_hooks={1: crash_at(point)})
    crash_writer_1(h, b, at_barrier=False)
    summary = h.job_failover()
    assert len(summary["rolled_back"]) == 1
    assert h.run_batch(rows_per_task=12) == b
    h.assert_exactly_once()
    assert leftovers(h) == []
