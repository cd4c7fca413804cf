"""Clock skew of writer tasks' engine clocks, and the evidence of a worker's process skew."""

import time
from pathlib import Path

import pytest

from engine.clock import AdjustableClock, SystemClock
from harness.faults.fired import FiredLog
from harness.faults.schedule import Occurrence
from harness.faults.skew import skew_at_ms, skew_task_clock
from harness.faults.worker_clock import observed_worker_skew
from harness.history import HistoryWriter, read_events
from harness.run_clock import RunClock


def skew(target: str, at_s: float, end_s: float, **params: float) -> Occurrence:
    return Occurrence("clock_skew", 0, at_s, end_s, target, params)


def test_skew_at_follows_the_window_and_the_kind() -> None:
    assert skew_at_ms(skew("writer:0", 10, 20, offset_ms=-500), 15) == -500
    assert skew_at_ms(skew("writer:0", 10, 20, offset_ms=-500), 20) == 0  # window over
    assert skew_at_ms(skew("writer:0", 10, 20, jump_ms=300), 9.9) == 0
    assert skew_at_ms(skew("writer:0", 10, 20, drift_ppm=1000), 15) == pytest.approx(5.0)


def test_a_writer_task_clock_is_skewed_and_the_evidence_recorded_once(tmp_path: Path) -> None:
    history = HistoryWriter(tmp_path / "history", "writer:1")
    fired = FiredLog(tmp_path / "fired")
    clock = AdjustableClock(SystemClock())
    run_clock = RunClock(t0=time.time() - 12)  # 12 s into the run
    faults = [skew("writer:1", 10, 30, offset_ms=-2000), skew("writer:0", 10, 30, jump_ms=99)]
    skew_task_clock(faults, clock, 1, run_clock, history, fired)
    assert clock.skew_ms == -2000
    assert not _faults(tmp_path)  # set, but nothing read the clock yet: not applied
    for _ in range(2):  # two tasks of the same writer in one Python worker, each reading
        skew_task_clock(faults, clock, 1, run_clock, history, fired)
        clock.now_ms()
    recorded = _faults(tmp_path)
    assert len(recorded) == 1
    evidence = recorded[0]["evidence"]
    assert recorded[0]["target"] == "writer:1" and evidence["clock_skew_ms"] == -2000
    assert evidence["skew_read_ms"] == -2000
    assert evidence["read_ms"] == evidence["true_ms"] - 2000
    # After the window the task's clock is true again.
    skew_task_clock(faults, clock, 1, RunClock(t0=time.time() - 31), history, fired)
    assert clock.skew_ms == 0


def _faults(tmp_path: Path) -> list[dict]:
    return [e for e in read_events(tmp_path / "history") if e["kind"] == "fault"]


def _task(t_true: float, skew_s: float, host: str) -> dict:
    base = 1000.0  # wall - mono of an unskewed process
    return {
        "kind": "task_clock",
        "t": t_true + skew_s,  # the task stamps events with its own (skewed) clock
        "host": host,
        "wall_minus_mono_s": base + skew_s,
    }


def test_observed_worker_skew_reads_the_workers_tasks_in_the_window() -> None:
    fault = {
        "kind": "fault",
        "t": 5000.0,
        "start_s": 20.0,
        "end_s": 30.0,
        "evidence": {"host": "127.0.0.12", "runner_wall_minus_mono_s": 1000.0},
    }
    events = [
        _task(4990, 0, "127.0.0.12"),  # before: no skew
        _task(5003, 0.75, "127.0.0.12"),
        _task(5005, 0.75, "127.0.0.12"),
        _task(5005, 0, "127.0.0.11"),  # another worker: not skewed
        _task(5012, 0, "127.0.0.12"),  # after the window
    ]
    observed = observed_worker_skew(fault, events)
    assert observed == {"tasks": 2, "skew_ms": 750.0, "skew_ms_before": 0.0}
    unknown = observed_worker_skew({**fault, "evidence": {}}, events)
    assert unknown["tasks"] == 0 and unknown["skew_ms"] is None


def test_ack_fault_counts_survive_a_driver_restart(tmp_path: Path) -> None:
    from harness.faults.driver_faults import DriverFaults

    drop = Occurrence("drop_ack", 0, 1.0, 1.0, "coordinator", {"count": 2})
    run_clock = RunClock(t0=time.time() - 5)
    delivered: list[int] = []

    def driver() -> DriverFaults:  # each driver process builds its own from the run's files
        history = HistoryWriter(tmp_path / "history", "driver")
        return DriverFaults([drop], run_clock, history, FiredLog(tmp_path / "fired"))

    driver().deliver_ack(3, delivered.append)  # dropped (1 of 2), then the driver dies
    restarted = driver()
    for batch in (4, 5, 6):
        restarted.deliver_ack(batch, delivered.append)
    assert delivered == [5, 6]  # ACK 4 was the second and last drop
    dropped = [e for e in read_events(tmp_path / "history") if e.get("action") == "dropped"]
    assert [e["checkpoint_id"] for e in dropped] == [3, 4]
