"""batch_writer_pause counts as applied only once another writer took the paused writer's
lease over: a writer that merely stood at its point was never a stale holder. The takeover
(or its absence) and the clock are stand-ins, so nothing waits on timing."""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path

import pytest
from fault_occurrence import occurrence

from harness.faults.writer_pause import WriterPause
from harness.history import HistoryWriter, read_events
from harness.run_clock import RunClock


def _events(tmp_path: Path) -> list[dict]:
    return [e for e in read_events(tmp_path / "history") if e["kind"] == "fault"]


class StandInLock:
    """The lock surface the pause uses: its hold's token, who took the lock over since."""

    token = "hold-1"

    def __init__(self, taken_by: str | None) -> None:
        self.taken_by = taken_by
        self.suspended: list[bool] = []

    def suspend_renewal(self, suspended: bool) -> None:
        self.suspended.append(suspended)

    def successor(self, token: object) -> str | None:
        return self.taken_by


@pytest.mark.parametrize("taken_by", ["batch_writer:1", None], ids=["taken-over", "never"])
def test_a_batch_writer_pause_counts_only_once_its_lease_was_taken_over(
    tmp_path: Path, taken_by: str | None
) -> None:
    """Without a takeover the writer never was a stale holder: the fault stays unapplied
    (the run is unknown), however long it stood at the point."""
    pause = occurrence(
        "batch_writer_pause",
        0,
        0.0,
        1.0,
        "batch_writer:0",
        {"point": "commit_after_checks", "duration_s": 1.0},
    )
    lock = StandInLock(taken_by)
    ticks = itertools.count(step=10)  # each look at the clock is 10 s later: no real wait
    writer = WriterPause(
        [pause],
        RunClock(t0=time.time() - 5),
        HistoryWriter(tmp_path / "history", "batch_writer:0"),
        lock,  # type: ignore[arg-type]
        threading.Event(),
        monotonic=lambda: float(next(ticks)),
    )
    writer.at_point("commit_after_checks", {"instant": "20261122101010101"})
    assert lock.suspended == [True, False]  # it did stand there, renewing nothing
    assert next(e["kind"] for e in read_events(tmp_path / "history")) == "pause_reached"
    if taken_by is None:
        assert _events(tmp_path) == []
        return
    [fault] = _events(tmp_path)
    assert fault["evidence"]["taken_by"] == "batch_writer:1"
