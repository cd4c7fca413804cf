"""The stream driver's wall clock, moved from outside its JVM (the `clock_skew` fault on
Hudi).

Every driver's JVM runs under libfaketime (Debian's `faketime`), which re-reads its
offset from a file of the run at most once a second: the runner writes the scenario's
offset or jump there, and a driver started after a crash inherits the clock its
predecessor had, as a process on the same skewed host would. Monotonic clocks are left
alone (the JVM's timers and Spark's triggers keep working).

The skew counts as applied only once its effect was seen: an instant file that appeared
with a requested time off the runner's own clock by the skew (Hudi's instant times are the
driver's clock readings, local time, to the millisecond).
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.faults.evidence import record_fault
from harness.faults.schedule import Occurrence
from harness.history import HistoryWriter
from harness.systems.hudi.timeline_watch import SeenInstant

LIBFAKETIME = Path("/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1")
TOLERANCE_MS = 1500.0  # the file's 1 s cache, plus the time from Hudi's clock to its file


class ClockUnavailable(RuntimeError):
    pass


def instant_epoch_ms(instant: str) -> float | None:
    """Epoch milliseconds of a Hudi instant time (yyyyMMddHHmmssSSS, local time)."""
    if len(instant) < 17 or not instant[:17].isdigit():
        return None
    moment = dt.datetime.strptime(instant[:14], "%Y%m%d%H%M%S")
    return moment.timestamp() * 1000 + int(instant[14:17])


@dataclass
class Step:
    """One skew of the driver's clock: set at `at_s`, undone at `end_s` (None: never). A
    drift's offset grows from 0 by `drift_ppm` of the time since it was set."""

    occurrence: Occurrence[Any]
    offset_ms: float
    end_s: float | None
    drift_ppm: float = 0.0
    set_wall: float | None = None  # the runner's wall clock when it was written
    set_s: float = 0.0  # ... and the run's elapsed seconds
    ended: bool = False
    proven: bool = False

    def offset_at(self, wall: float) -> float:
        """Its part of the driver's offset at the runner's wall time `wall` (ms)."""
        if self.set_wall is None or wall < self.set_wall or self.ended:
            return 0.0
        return self.offset_ms + self.drift_ppm * 1e-6 * (wall - self.set_wall) * 1000


def step_of(occurrence: Occurrence[Any]) -> Step:
    """offset_ms and drift_ppm last their duration (or the run); jump_ms stays."""
    fault = occurrence.fault
    if fault.jump_ms is not None:
        return Step(occurrence, float(fault.jump_ms), None)
    end = occurrence.end_s if fault.duration_s is not None else None
    if fault.drift_ppm is not None:
        return Step(occurrence, 0.0, end, drift_ppm=float(fault.drift_ppm))
    return Step(occurrence, float(fault.offset_ms), end)


class DriverClock:
    def __init__(self, control: Path) -> None:
        if not LIBFAKETIME.exists():
            raise ClockUnavailable(f"{LIBFAKETIME} is missing (Debian package faketime)")
        self.path = control / "driver-clock"
        self.set_offset(0.0)

    def env(self) -> dict[str, str]:
        """The environment of a driver's JVM: its wall clock read from self.path (the
        driver's python is left alone: py4j's gateway start fails under libfaketime)."""
        return {
            "LD_PRELOAD": str(LIBFAKETIME),
            "FAKETIME_TIMESTAMP_FILE": str(self.path),
            "FAKETIME_CACHE_DURATION": "1",
            "FAKETIME_DONT_FAKE_MONOTONIC": "1",
            "DONT_FAKE_MONOTONIC": "1",
            # glibc here gets libfaketime's monotonic fix by default, which makes the JVM's
            # timed waits return at once: every waiting thread spins (a JVM burnt both
            # cores and a clock read cost 3.6 us). Off: timed waits wait, a read is 0.45 us.
            "FAKETIME_FORCE_MONOTONIC_FIX": "0",
        }

    def set_offset(self, offset_ms: float) -> None:
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(f"{offset_ms / 1000:+.3f}\n")
        os.replace(tmp, self.path)  # a reader sees the old offset or the new one


def observed_skew(instant: str, seen_wall: float) -> float | None:
    """The driver's clock minus the runner's, from an instant that just appeared."""
    epoch_ms = instant_epoch_ms(instant)
    return None if epoch_ms is None else epoch_ms - seen_wall * 1000


def step_evidence(
    step: Step, instant: str, seen_wall: float, expected_ms: float
) -> dict[str, Any] | None:
    """Proof of a step: an instant requested after it was set, off by the driver's whole
    offset then (`expected_ms`); a drift only once it has moved the clock by more than
    the tolerance twice over (an instant read before that would prove nothing)."""
    skew = observed_skew(instant, seen_wall)
    if step.set_wall is None or skew is None or seen_wall < step.set_wall:
        return None
    if abs(skew - expected_ms) > TOLERANCE_MS:
        return None
    drifted = step.offset_at(seen_wall) - step.offset_ms
    if step.drift_ppm and abs(drifted) < 2 * TOLERANCE_MS:
        return None
    return {
        "instant": instant,
        "seen_wall_ms": round(seen_wall * 1000),
        "observed_skew_ms": round(skew),
        "offset_ms": round(expected_ms, 1),
        **(
            {"drift_ppm": step.drift_ppm, "drifted_ms": round(drifted, 1)} if step.drift_ppm else {}
        ),
        "tolerance_ms": TOLERANCE_MS,
        "clock": "libfaketime on the stream driver's JVM",
    }


@dataclass
class ClockSteps:
    """The run's skews of the driver clock: set and undone on schedule, each recorded as
    applied once an instant showed it (from the timeline watch's thread)."""

    clock: DriverClock
    steps: list[Step]
    history: HistoryWriter

    def offset_at(self, wall: float) -> float:
        """The driver's whole offset at the runner's wall time `wall` (ms)."""
        return sum(s.offset_at(wall) for s in self.steps)

    def move(self, elapsed: float) -> None:
        """Set and undo steps on schedule; a drift rewrites the offset at every call
        (libfaketime reads it once a second: the clock drifts in steps of a second)."""
        changed = False
        for step in self.steps:
            if step.set_wall is None and elapsed >= step.occurrence.at_s:
                step.set_wall, step.set_s, changed = time.time(), elapsed, True
            elif step.end_s is not None and not step.ended and elapsed >= step.end_s:
                step.ended, changed = True, True
        drifting = any(s.drift_ppm and s.set_wall is not None and not s.ended for s in self.steps)
        if changed or drifting:
            self.clock.set_offset(self.offset_at(time.time()))

    def seen(self, new: Sequence[SeenInstant], wall_of: Callable[[float], float]) -> None:
        """`wall_of`: the runner's wall time of a monotonic reading (the watch's)."""
        for entry in new:
            if entry.state != "requested":
                continue
            for step in self.steps:
                if step.proven or step.ended:
                    continue
                wall = wall_of(entry.seen_s)
                proof = step_evidence(step, entry.requested, wall, self.offset_at(wall))
                if proof is not None:
                    step.proven = True
                    record_fault(self.history, step.occurrence, step.set_s, **proof)

    def unproven(self) -> bool:
        """A skew set whose effect no instant has shown yet."""
        return any(s.set_wall is not None and not s.proven and not s.ended for s in self.steps)
