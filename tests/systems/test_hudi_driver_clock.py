"""The stream driver's clock under libfaketime: set on schedule, and a skew counts as
applied only once an instant showed it."""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.faults.schedule import Occurrence
from harness.history import HistoryWriter, load_events
from harness.scenario.faults import ClockSkew
from harness.systems.hudi import driver_clock
from harness.systems.hudi.driver_clock import (
    LIBFAKETIME,
    ClockSteps,
    DriverClock,
    instant_epoch_ms,
    step_of,
)
from harness.systems.hudi.timeline_watch import SeenInstant


@pytest.fixture
def faketime(prerequisite: Callable[[bool, str], None]) -> None:
    prerequisite(LIBFAKETIME.exists(), f"{LIBFAKETIME}: Debian's faketime (.ci/run installs it)")


def _instant(wall: float) -> str:
    moment = dt.datetime.fromtimestamp(wall)
    return moment.strftime("%Y%m%d%H%M%S") + f"{moment.microsecond // 1000:03d}"


def _occurrence(**skew: float) -> Occurrence:
    fault = ClockSkew(kind="clock_skew", at_s=1, **skew)  # type: ignore[arg-type]
    end = 1 + (fault.duration_s or 0)
    return Occurrence(fault, 0, 1.0, end)


def test_instant_times_are_local_wall_clock_milliseconds() -> None:
    now = time.time()
    assert instant_epoch_ms(_instant(now)) == pytest.approx(now * 1000, abs=1)
    assert instant_epoch_ms("20261128") is None


def test_a_jump_stays_and_an_offset_ends_with_its_duration() -> None:
    assert step_of(_occurrence(jump_ms=-5000)).end_s is None
    windowed = step_of(_occurrence(offset_ms=3000, duration_s=4))
    assert (windowed.offset_ms, windowed.end_s) == (3000, 5.0)


def test_steps_are_written_on_schedule_and_proven_by_a_skewed_instant(
    tmp_path: Path, faketime: None
) -> None:
    history = HistoryWriter(tmp_path / "history", "runner")
    clock = DriverClock(tmp_path)
    assert clock.path.read_text().strip() == "+0.000"
    steps = ClockSteps(clock, [step_of(_occurrence(jump_ms=-10000))], history)
    steps.move(0.5)
    assert clock.path.read_text().strip() == "+0.000" and steps.unproven() is False
    steps.move(1.0)
    assert clock.path.read_text().strip() == "-10.000" and steps.unproven()

    def seen(instant: str) -> SeenInstant:
        return SeenInstant(
            time.monotonic(), 1, f"{instant}.commit.requested", "requested", "commit", instant, None
        )

    wall_of = lambda monotonic_s: time.time()  # noqa: E731 - seen just now
    steps.seen([seen(_instant(time.time()))], wall_of)  # an unskewed instant: no proof
    assert steps.unproven()
    steps.seen([seen(_instant(time.time() - 10))], wall_of)
    assert not steps.unproven()
    (fault,) = [e for e in load_events(tmp_path / "history")[0] if e["kind"] == "fault"]
    evidence = fault["evidence"]
    assert abs(evidence["observed_skew_ms"] + 10000) < 1500 and evidence["offset_ms"] == -10000
    assert fault["applied"] and fault["start_s"] == 1.0


def test_a_drift_moves_the_offset_with_time_and_is_proven_once_it_is_well_past_the_noise(
    tmp_path: Path, faketime: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    wall = [1_000_000.0]
    monkeypatch.setattr(driver_clock.time, "time", lambda: wall[0])
    history = HistoryWriter(tmp_path / "history", "runner")
    clock = DriverClock(tmp_path)
    drift = step_of(_occurrence(drift_ppm=100_000, duration_s=60))  # 10%: 100 ms a second
    assert (drift.offset_ms, drift.drift_ppm, drift.end_s) == (0.0, 100_000, 61.0)
    steps = ClockSteps(clock, [drift], history)
    steps.move(1.0)
    assert clock.path.read_text().strip() == "+0.000"
    wall[0] += 10
    steps.move(11.0)
    assert clock.path.read_text().strip() == "+1.000"

    def seen_at(skew_s: float) -> SeenInstant:
        instant = _instant(wall[0] + skew_s)
        return SeenInstant(
            0.0, 1, f"{instant}.commit.requested", "requested", "commit", instant, None
        )

    steps.seen([seen_at(1.0)], lambda _: wall[0])  # 1 s drifted: within the noise, no proof
    assert steps.unproven()
    wall[0] += 40
    steps.move(51.0)
    assert clock.path.read_text().strip() == "+5.000"
    steps.seen([seen_at(0.0)], lambda _: wall[0])  # an instant on the runner's clock: none
    steps.seen([seen_at(5.0)], lambda _: wall[0])
    assert not steps.unproven()
    (fault,) = [e for e in load_events(tmp_path / "history")[0] if e["kind"] == "fault"]
    assert fault["evidence"]["drifted_ms"] == 5000 and fault["evidence"]["drift_ppm"] == 100_000
    wall[0] += 10
    steps.move(61.0)  # its duration is over: the clock is back
    assert clock.path.read_text().strip() == "+0.000"


def test_a_process_under_the_clock_reads_the_file_s_offset(tmp_path: Path, faketime: None) -> None:
    clock = DriverClock(tmp_path)
    clock.set_offset(-3600_000)
    env = {**os.environ, **clock.env()}
    out = subprocess.run(
        ["python3", "-c", "import time; print(time.time())"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert float(out.stdout) == pytest.approx(time.time() - 3600, abs=5)
