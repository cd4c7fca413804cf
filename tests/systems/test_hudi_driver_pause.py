"""A paused Hudi driver (harness/systems/hudi/driver_pause.py): stopped with everything it
started, resumed only once its successor's commit log holds its batch and duration_s
passed, and recorded as applied only then."""

from __future__ import annotations

import json
from pathlib import Path

import psutil

from harness.faults.schedule import Occurrence
from harness.history import HistoryWriter
from harness.scenario.faults import CoordinatorPause
from harness.systems.hudi.driver_pause import DriverPause
from harness.systems.hudi.seams import KillEvidence
from harness.systems.spark_stream.runtime_cache import SparkRuntime
from tests.systems.test_hudi_driver_process import _driver, runtime  # noqa: F401


def _states(pause: DriverPause) -> set[str]:
    return {p.status() for p in pause.stopped if p.is_running()}


def _evidence(in_window: bool) -> KillEvidence:
    return KillEvidence(
        "20261129000000001.commit.requested", 1.0, 1.1, [2, 3], [2], [2], 3, in_window
    )


def test_a_driver_paused_mid_commit_resumes_after_its_successor_committed_its_batch(
    tmp_path: Path,
    runtime: SparkRuntime,  # noqa: F811
) -> None:
    driver = _driver(runtime, tmp_path)
    assert driver.wait_for(("started",), 10) is not None
    checkpoint = tmp_path / "checkpoint"
    (checkpoint / "commits").mkdir(parents=True)
    fault = CoordinatorPause(kind="coordinator_pause", at_s=8, duration_s=10, point="mid_commit")
    history = HistoryWriter(tmp_path / "history", "runner")
    pause = DriverPause(Occurrence(fault, 0, 8.0, 18.0), driver, checkpoint)
    try:
        pause.stop_now()
        assert len(pause.stopped) >= 2  # the script and the child it left (as pyspark its JVM)
        assert pause.confirm(_evidence(True), 9.0)
        assert _states(pause) <= {psutil.STATUS_STOPPED, psutil.STATUS_ZOMBIE}
        pause.step(30.0, history)  # past duration_s, the successor has not committed batch 3
        assert pause.unsettled()
        (checkpoint / "commits" / "3").write_text("v1\n{}")
        pause.step(31.0, history)
        assert not pause.unsettled()
        assert psutil.STATUS_STOPPED not in _states(pause)
    finally:
        pause.release()
        driver.kill()
    events = [json.loads(line) for p in history.dir.glob("*.jsonl") for line in p.open()]
    (fault_event,) = [e for e in events if e["kind"] == "fault"]
    assert fault_event["start_s"] == 9.0 and fault_event["evidence"]["batch"] == 3
    assert fault_event["evidence"]["successor_committed_batch_s"] == 31.0


def test_a_stop_outside_the_window_is_not_a_pause(
    tmp_path: Path,
    runtime: SparkRuntime,  # noqa: F811
) -> None:
    driver = _driver(runtime, tmp_path)
    assert driver.wait_for(("started",), 10) is not None
    fault = CoordinatorPause(kind="coordinator_pause", at_s=8, point="mid_commit")
    pause = DriverPause(Occurrence(fault, 0, 8.0, 18.0), driver, tmp_path / "checkpoint")
    try:
        pause.stop_now()
        assert not pause.confirm(_evidence(False), 9.0)  # the instant completed first
    finally:
        pause.release()
        driver.kill()
