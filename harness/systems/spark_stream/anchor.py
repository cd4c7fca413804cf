"""One reading of the wall clock and the monotonic clock together: the watches see commits
on the monotonic clock (no clock fault moves it), the history records wall times."""

from __future__ import annotations

import time
from dataclasses import dataclass

from harness.history import HistoryWriter
from harness.history_events import Kind
from harness.scenario import Scenario


@dataclass(frozen=True)
class Anchor:
    """One reading of both clocks: converts the watch's monotonic times to wall times."""

    wall: float
    monotonic: float

    def wall_of(self, monotonic_s: float) -> float:
        return self.wall + (monotonic_s - self.monotonic)


def run_started(history: HistoryWriter, scenario: Scenario, run_id: str) -> Anchor:
    """Second 0 of a run on both clocks, recorded as the run's start (its warm-up,
    duration and checkpoint interval beside it)."""
    anchor = Anchor(time.time(), time.monotonic())
    history.record(
        Kind.RUN_START,
        t=anchor.wall,
        run_id=run_id,
        scenario=scenario.name,
        warmup_s=scenario.warmup_s,
        duration_s=scenario.duration_s,
        checkpoint_interval_s=scenario.engine.checkpoint_interval_s,
    )
    return anchor
