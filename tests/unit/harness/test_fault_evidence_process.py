"""The rest of "evidence only after the effect" (test_fault_evidence.py has the others): a
dropped ACK, a paused coordinator and the cluster worker faults. Each is shown not recorded
while (or when) its effect is absent and recorded once it is there; every outcome is
forced (a stand-in cluster whose status the test sets, a stopped check that says no)."""

from __future__ import annotations

import itertools
import json
import time
from concurrent.futures import Future
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fault_occurrence import occurrence
from stand_in_drivers import new_supervisor, stand_in_supervisor

from harness.faults import worker_faults as worker_faults_module
from harness.faults.driver_faults import DriverFaults
from harness.faults.fired import FiredLog
from harness.history import HistoryWriter, read_events
from harness.run_clock import RunClock
from harness.runner import supervisor as supervisor_module
from harness.runner.supervisor import Supervisor
from infra.cluster.info import WorkerInfo


def _events(tmp_path: Path, kind: str = "fault") -> list[dict[str, Any]]:
    return [e for e in read_events(tmp_path / "history") if e["kind"] == kind]


# -- drop_ack ---------------------------------------------------------------------------


def test_a_drop_is_recorded_once_the_ack_after_the_withheld_ones_is_delivered(
    tmp_path: Path,
) -> None:
    drop = occurrence("drop_ack", 0, 10.0, 10.0, "coordinator", {"count": 2})
    history = HistoryWriter(tmp_path / "history", "driver")
    faults = DriverFaults([drop], RunClock(t0=time.time() - 5), history, FiredLog(tmp_path))
    delivered: list[int] = []

    def notify(batch_id: int) -> Future:
        assert batch_id != 4 or _events(tmp_path)  # recorded as ACK 4 goes, not before
        delivered.append(batch_id)
        return Future()

    faults.deliver_ack(1, notify)  # before at_s: delivered, nothing recorded
    assert delivered == [1] and _events(tmp_path) == []
    faults.clock = RunClock(t0=time.time() - 11)  # the drop is due, but no ACK came yet
    faults.deliver_ack(2, notify)
    faults.deliver_ack(3, notify)  # the second and last withheld
    assert delivered == [1] and _events(tmp_path) == []  # withheld is not applied yet
    faults.deliver_ack(4, notify)  # the one that must subsume them
    [fault] = _events(tmp_path)
    assert fault["fault_kind"] == "drop_ack" and fault["applied"] is True
    evidence = fault["evidence"]
    assert (evidence["checkpoint_id"], evidence["dropped"], evidence["subsumed_by"]) == (4, 2, 4)
    faults.deliver_ack(5, notify)
    assert delivered == [1, 4, 5] and len(_events(tmp_path)) == 1  # once


# -- coordinator_pause --------------------------------------------------------------------


@pytest.fixture
def supervisor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A supervisor over stand-in drivers, with a due pause."""
    pause = occurrence("coordinator_pause", 0, 0.0, 30.0, "coordinator", {"duration_s": 30.0})
    with stand_in_supervisor(tmp_path, monkeypatch, [pause]) as sup:
        sup.t0 = time.time() - 1  # the pause is due
        yield sup


def test_a_pause_the_driver_never_showed_is_not_recorded(
    supervisor: Supervisor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(supervisor_module, "wait_stopped", lambda pid: None)
    supervisor.tick()
    assert supervisor.restarts == 1  # the successor started all the same
    assert _events(tmp_path) == []


def test_a_pause_is_recorded_once_the_zombie_resumed_after_its_successor_committed(
    supervisor: Supervisor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[int] = []
    real = supervisor_module.wait_stopped

    def wait_stopped(pid: int) -> str | None:
        seen.append(pid)
        return real(pid)

    monkeypatch.setattr(supervisor_module, "wait_stopped", wait_stopped)
    zombie = supervisor.driver
    supervisor.tick()
    assert seen == [zombie.pid] and _events(tmp_path) == []  # stopped: not applied yet
    successor = supervisor.driver
    supervisor.t0 = time.time() - 40  # the pause's 30 s are over ...
    supervisor.tick()
    assert _events(tmp_path) == []  # ... but the successor has committed nothing yet
    status = {"pid": successor.pid, "rows_committed": 10}
    (tmp_path / "status.json").write_text(json.dumps(status))
    supervisor.tick()
    [fault] = _events(tmp_path)
    evidence = fault["evidence"]
    assert evidence["paused_pid"] == zombie.pid and evidence["state"] in ("T", "t")
    assert evidence["new_pid"] == successor.pid != zombie.pid
    assert evidence["resumed_state"] not in ("T", "t") and evidence["resumed_s"] >= 40
    assert fault["start_s"] < evidence["resumed_s"]  # the pause began when it was stopped


def test_a_zombie_that_never_showed_as_stopped_is_not_recorded_when_resumed(
    supervisor: Supervisor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(supervisor_module, "wait_stopped", lambda pid: None)
    supervisor.tick()
    supervisor.t0 = time.time() - 40
    status = {"pid": supervisor.driver.pid, "rows_committed": 10}
    (tmp_path / "status.json").write_text(json.dumps(status))
    supervisor.tick()
    assert [e["kind"] for e in read_events(tmp_path / "history")].count("driver_resumed") == 1
    assert _events(tmp_path) == []


# -- worker_kill, worker_pause ----------------------------------------------------------


class StandInCluster:
    """The infra.cluster backend surface the supervisor uses; `shows` says whether the
    worker's status reflects what was done to it."""

    def __init__(self, shows: bool) -> None:
        self.shows = shows
        self.done: list[str] = []
        self.info = type("Info", (), {"worker": lambda _, n: WorkerInfo(n, "127.0.0.11", 7)})()

    def status(self) -> dict[str, Any]:
        status: dict[str, Any] = {"index": 1, "alive": True, "process_state": "S"}
        if self.shows and "kill" in self.done:
            status["alive"] = False
        if self.shows and "pause" in self.done:
            status["process_state"] = "T"
        return {"workers": [status]}

    def kill_worker(self, n: int) -> None:
        self.done.append("kill")

    def pause_worker(self, n: int) -> None:
        self.done.append("pause")


@pytest.mark.parametrize("kind", ["worker_kill", "worker_pause"])
@pytest.mark.parametrize("shows", [True, False], ids=["shown", "never-shown"])
def test_a_worker_fault_is_recorded_only_once_the_worker_shows_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str, shows: bool
) -> None:
    # The supervisor's own clock: each poll of the worker's status is a second later, so
    # a status that never shows the fault is given up on after a few polls, without waiting.
    ticks = itertools.count()
    fake_time = SimpleNamespace(sleep=lambda s: None, monotonic=lambda: float(next(ticks)))
    monkeypatch.setattr(worker_faults_module, "time", fake_time)
    cluster = StandInCluster(shows)
    o = occurrence(kind, 0, 5.0, 10.0, "worker:1", {})
    sup = new_supervisor(tmp_path, tmp_path, [o], cluster=cluster)
    sup.worker_faults.apply(o, 5.0)
    assert cluster.done == [kind.removeprefix("worker_")]  # applied either way
    if not shows:
        assert _events(tmp_path) == []
        return
    [fault] = _events(tmp_path)
    assert fault["evidence"]["workers_before"][0]["alive"] is True  # taken before the fault
    after = fault["evidence"]["worker_after"]
    assert (after["alive"] is False) if kind == "worker_kill" else after["process_state"] == "T"
