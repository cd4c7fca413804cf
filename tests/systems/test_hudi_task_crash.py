"""writer_crash on Hudi: the Python stage's worker dies inside Hudi's write, and the
runner records the crash only once Spark's retry of that task ran (no Spark here: the
stage's task-start logic with a stand-in TaskContext, the runner's half on files)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.faults.schedule import Occurrence, parse_fault
from harness.history import HistoryWriter, read_events
from harness.systems.hudi import task_crash_stage
from harness.systems.hudi.task_crash import TaskCrashes, crash_spec, failed_batch, write_armed
from harness.systems.hudi.task_crash_stage import ARMED, at_task_start
from harness.systems.hudi.timeline_names import pending_instants


class Task:
    """The parts of pyspark's TaskContext the stage reads."""

    def __init__(self, stage: int, partition: int, attempt: int) -> None:
        self._ids = (stage, partition, attempt)

    def stageId(self) -> int:
        return self._ids[0]

    def partitionId(self) -> int:
        return self._ids[1]

    def attemptNumber(self) -> int:
        return self._ids[2]

    def getLocalProperty(self, key: str) -> str | None:
        return {task_crash_stage.BATCH_PROPERTY: "7", task_crash_stage.DRIVER_PROPERTY: "41"}.get(
            key
        )


@pytest.fixture
def spec(tmp_path: Path) -> dict[str, Any]:
    timeline = tmp_path / "table" / ".hoodie" / "timeline"
    timeline.mkdir(parents=True)
    return crash_spec(tmp_path / "control", tmp_path / "table", ("commit",), 2)


@pytest.fixture
def kills(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    killed: list[int] = []
    monkeypatch.setattr(task_crash_stage.os, "kill", lambda pid, sig: killed.append(pid))
    return killed


def _arm(spec: dict[str, Any], partition: int, every_attempt: bool = False) -> None:
    write_armed(Path(spec["dir"]), "writer_crash@writer:1#0", partition, every_attempt)


def _request(spec: dict[str, Any], name: str) -> None:
    (Path(spec["timeline"]) / name).write_text("")


def test_pending_instants_are_the_requested_ones_of_the_actions_not_completed(
    spec: dict[str, Any],
) -> None:
    for name in (
        "001.commit.requested",
        "001.commit.inflight",
        "001_002.commit",
        "003.commit.requested",
        "004.clean.requested",
        "hoodie.properties",
    ):
        _request(spec, name)
    assert pending_instants(spec["timeline"], ["commit"]) == ["003"]
    assert pending_instants(spec["timeline"], ["commit", "clean"]) == ["003", "004"]
    assert pending_instants(str(Path(spec["timeline"]) / "missing"), ["commit"]) == []


def test_the_armed_task_dies_only_with_its_batch_s_instant_pending(
    spec: dict[str, Any], kills: list[int]
) -> None:
    _arm(spec, partition=1)
    at_task_start(spec, Task(5, 1, 0))  # no instant requested yet: Hudi is not writing
    assert kills == [] and not list(Path(spec["dir"]).glob("*.exited"))
    at_task_start(spec, Task(5, 0, 0))  # another task
    _request(spec, "009.commit.requested")
    at_task_start(spec, Task(5, 0, 0))
    assert kills == []
    at_task_start(spec, Task(5, 1, 0))
    assert kills == [os.getpid()]
    exited = json.loads((Path(spec["dir"]) / "writer_crash@writer:1#0.exited").read_text())
    assert exited["pending_instants"] == ["009"]
    assert (exited["stage"], exited["partition"], exited["attempt"], exited["batch_id"]) == (
        5,
        1,
        0,
        "7",
    )
    at_task_start(spec, Task(6, 1, 0))  # a later first attempt: the crash already happened
    assert kills == [os.getpid()]


def test_only_the_retry_of_the_task_that_died_says_it_ran_again(
    spec: dict[str, Any], kills: list[int]
) -> None:
    _arm(spec, partition=1)
    _request(spec, "009.commit.requested")
    retried = Path(spec["dir"]) / "writer_crash@writer:1#0.retried"
    at_task_start(spec, Task(5, 1, 1))  # a retry with no crash before it
    assert not retried.exists()
    at_task_start(spec, Task(5, 1, 0))
    at_task_start(spec, Task(4, 1, 1))  # another stage's retry
    at_task_start(spec, Task(5, 0, 1))  # another task's
    assert not retried.exists()
    at_task_start(spec, Task(5, 1, 1))
    assert json.loads(retried.read_text())["attempt"] == 1


def _occurrence() -> Occurrence[Any]:
    fault = parse_fault(
        {"kind": "writer_crash", "at_s": 8, "target": "writer:1", "point": "before_flush"}
    )
    return Occurrence(fault, 0, 8.0, 8.0)


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_the_runner_arms_when_due_and_records_only_a_crash_spark_retried(
    spec: dict[str, Any], tmp_path: Path
) -> None:
    history = HistoryWriter(tmp_path / "history", "runner")
    crashes = TaskCrashes([_occurrence()], spec)
    folder = Path(spec["dir"])
    crashes.step(7.9, 0.0, history)
    assert not (folder / ARMED).exists() and crashes.unsettled()
    crashes.step(8.0, 0.0, history)
    assert json.loads((folder / ARMED).read_text()) == {
        "label": "writer_crash@writer:1#0",
        "partition": 1,
        "every_attempt": False,
    }
    label = "writer_crash@writer:1#0"
    (folder / f"{label}.exited").write_text(json.dumps({"pid": os.getpid(), "t": 9.5}))
    (folder / f"{label}.retried").write_text(json.dumps({"attempt": 1}))
    crashes.step(9.0, 0.0, history)  # the worker that claimed the crash is alive: not yet
    assert crashes.unsettled() and read_events(tmp_path / "history") == []
    (folder / f"{label}.exited").write_text(json.dumps({"pid": _dead_pid(), "t": 9.5}))
    crashes.step(10.0, 0.0, history)
    (event,) = [e for e in read_events(tmp_path / "history") if e["kind"] == "fault"]
    assert event["applied"] and event["label"] == label and event["start_s"] == 9.5
    assert event["evidence"]["point"] == "before_flush"
    assert event["evidence"]["retried"] == {"attempt": 1}
    assert not crashes.unsettled() and not (folder / ARMED).exists()


def test_an_armed_crash_whose_task_never_ran_again_stays_unsettled(
    spec: dict[str, Any], tmp_path: Path
) -> None:
    history = HistoryWriter(tmp_path / "history", "runner")
    crashes = TaskCrashes([_occurrence()], spec)
    crashes.step(8.0, 0.0, history)
    label = "writer_crash@writer:1#0"
    (Path(spec["dir"]) / f"{label}.exited").write_text(json.dumps({"pid": _dead_pid(), "t": 9}))
    crashes.step(30.0, 0.0, history)
    assert crashes.unsettled() and read_events(tmp_path / "history") == []


def test_a_batch_is_failed_by_every_attempt_of_one_task_dying(
    spec: dict[str, Any], kills: list[int]
) -> None:
    """coordinator_crash mid_retry on Hudi: the job must fail so the sink retries it."""
    _arm(spec, partition=0, every_attempt=True)
    _request(spec, "009.commit.requested")
    folder, label = Path(spec["dir"]), "writer_crash@writer:1#0"
    at_task_start(spec, Task(5, 0, 0))
    assert failed_batch(folder, label, 4) is None  # one attempt of four
    for attempt in (1, 2):
        at_task_start(spec, Task(5, 0, attempt))
    at_task_start(spec, Task(6, 0, 3))  # another stage: the retry's job, which must not die
    assert len(kills) == 3 and failed_batch(folder, label, 4) is None
    at_task_start(spec, Task(5, 0, 3))
    assert len(kills) == 4 and not (folder / f"{label}.retried").exists()
    failure = failed_batch(folder, label, 4)
    assert failure is not None and failure["pending_instants"] == ["009"]
    assert [a["attempt"] for a in failure["attempts"]] == [0, 1, 2, 3]
    assert {a["driver"] for a in failure["attempts"]} == {"41"}


def test_a_restarted_driver_s_tasks_are_not_the_task_that_died(
    spec: dict[str, Any], kills: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    _arm(spec, partition=0, every_attempt=True)
    _request(spec, "009.commit.requested")
    at_task_start(spec, Task(5, 0, 0))
    monkeypatch.setattr(Task, "getLocalProperty", lambda self, key: "42")  # another driver
    at_task_start(spec, Task(5, 0, 1))  # the same stage id and partition, a new driver
    assert len(kills) == 1
