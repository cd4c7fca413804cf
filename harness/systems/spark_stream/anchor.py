"""One reading of the wall clock and the monotonic clock together: the watches see commits
on the monotonic clock (no clock fault moves it), the history records wall times."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Anchor:
    """One reading of both clocks: converts the watch's monotonic times to wall times."""

    wall: float
    monotonic: float

    def wall_of(self, monotonic_s: float) -> float:
        return self.wall + (monotonic_s - self.monotonic)
