"""Writer tasks never read a clock: why `instantbench validate` refuses a clock_skew of
`writer:N` and of `worker:N` (a cluster worker runs writer tasks only). If a writer task
ever starts reading its clock (a heartbeat of its own, a time it generates), this fails and
those targets must be accepted and made real (harness/scenario/faults.py SkewTarget)."""

from __future__ import annotations

import pytest
from stream_harness import Crash, StreamHarness, crash_at, ids

from engine.clock import SystemClock
from engine.stream.writer import WriterTask
from engine.table import Table


class CountingClock:
    def __init__(self) -> None:
        self.reads = 0

    def now_ms(self) -> int:
        self.reads += 1
        return SystemClock().now_ms()


class WritersOnTheirOwnClock(StreamHarness):
    """Writer tasks get a table of their own (as in an executor), on a clock that counts."""

    def __init__(self, root: str, row_group_flushes: bool) -> None:
        super().__init__(root, write_batch_rows=3, row_group_flushes=row_group_flushes)
        self.writer_clock = CountingClock()
        self.writer_table = Table.open(self.table.path, clock=self.writer_clock)

    def writer(self, task: int, attempt: int = 0, fault_hook=None) -> WriterTask:
        coordinator_table, self.table = self.table, self.writer_table
        try:
            return super().writer(task, attempt, fault_hook)
        finally:
            self.table = coordinator_table


@pytest.mark.parametrize("row_group_flushes", [True, False], ids=["appended", "file-per-flush"])
def test_writer_tasks_never_read_their_clock(tmp_path, row_group_flushes: bool) -> None:
    """Both ways a writer task flushes (the pipeline's: row groups of one file per instant)."""
    h = WritersOnTheirOwnClock(str(tmp_path), row_group_flushes)
    h.run_batch()  # eager flushes (3 rows) inside each task, then the ACK
    h.run_batch(ack=False)  # written, recorded by Spark, its ACK lost
    # A task crashes mid-flush and Spark retries it.
    b = h.start_batch(fault_hooks={0: crash_at("mid_flush")})
    h.consume(1, ids(b, 1, 7))
    try:
        h.consume(0, ids(b, 0, 7))
    except Crash:
        h.subtask_fails(0)
        h.consume(0, ids(b, 0, 7))
    assert h.writers[0].attempt == 1 and h.writers[0].table is h.writer_table
    h.checkpoint()
    h.restart_coordinator()  # the driver dies: restored writers re-send their WriteMeta
    h.run_batch()
    assert h.writer_clock.reads == 0
    h.assert_exactly_once()  # the writers did write: the count above is not vacuous
