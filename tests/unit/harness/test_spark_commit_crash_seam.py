"""coordinator_crash at after_spark_commit_before_ack: the driver dies after Spark logged a
batch's commit and before its AckWatcher recorded the batch or sent the ACK. No driver
event names that batch; the exactly-once ground truth must still expect it (without Spark:
a checkpoint in Spark's format, the real AckWatcher and DriverFaults, the kill stubbed)."""

import os
import signal
import time
from pathlib import Path

import pytest
from fault_occurrence import occurrence
from spark_checkpoint import chained, write_checkpoint

from harness.faults.driver_faults import DriverFaults
from harness.faults.fired import FiredLog
from harness.history import HistoryWriter, read_events
from harness.pipeline.acks import SPARK_COMMIT_SEAM, AckWatcher
from harness.run_clock import RunClock
from harness.runner.ground_truth import expected_batches
from harness.scenario import load_scenario


class Killed(Exception):
    """Stands in for the SIGKILL: the poll stops where the process would have died."""


def _watcher(tmp_path: Path, ckp: Path, after: int, acked: list[int]) -> AckWatcher:
    crash = occurrence("coordinator_crash", 0, 5, 5, "coordinator", {"point": SPARK_COMMIT_SEAM})
    history = HistoryWriter(tmp_path / "history", "driver")
    faults = DriverFaults(
        [crash], RunClock(t0=time.time() - 20), history, FiredLog(tmp_path / "fired")
    )
    return AckWatcher(
        str(ckp),
        lambda n, info: acked.append(n),
        history,
        after_batch=after,
        fault_hook=faults.coordinator_hook,
    )


def test_the_driver_dies_before_recording_the_batch_and_the_checkpoint_still_expects_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ckp = write_checkpoint(tmp_path / "ckp", chained(10, 20, 30), commits=[0, 1, 2])
    kills: list[tuple[int, int]] = []

    def kill(pid: int, sig: int) -> None:
        kills.append((pid, sig))
        raise Killed

    monkeypatch.setattr(os, "kill", kill)
    acked: list[int] = []
    with pytest.raises(Killed):
        _watcher(tmp_path, ckp, after=1, acked=acked).poll_once()
    assert kills == [(os.getpid(), signal.SIGKILL)]
    [point] = read_events(tmp_path / "history")
    assert point["kind"] == "coordinator_crash_point"
    assert point["point"] == SPARK_COMMIT_SEAM and point["checkpoint_id"] == 2
    assert acked == []  # neither recorded nor ACKed: only Spark's commit log knows batch 2

    # The restarted driver resumes after batch 2 (Spark's last commit); the occurrence has
    # fired, so it does not die again; batch 3 is recorded and ACKed, batch 2 never is.
    write_checkpoint(tmp_path / "ckp", chained(10, 20, 30, 40), commits=[0, 1, 2, 3])
    _watcher(tmp_path, ckp, after=2, acked=acked).poll_once()
    assert acked == [3] and len(kills) == 1
    events = read_events(tmp_path / "history")
    assert [e["batch_id"] for e in events if e["kind"] == "batch"] == [3]

    events.append({"t": 30.0, "kind": "ack", "checkpoint_id": 3, "action": "delivered"})
    path = tmp_path / "scenario.yaml"
    path.write_text("name: t\nchecks: [exactly_once]\n")
    truth = expected_batches(load_scenario(path, []), events, ckp)
    by_id = {b["batch_id"]: b for b in truth.batches}
    assert by_id[2] == {"batch_id": 2, "start_offset": 20, "end_offset": 30, "certain": True}
    assert truth.disagreements == [] and truth.uncertain_committed == []


def test_the_seam_is_not_reached_on_the_way_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ckp = write_checkpoint(tmp_path / "ckp", chained(10, 20), commits=[0, 1])
    monkeypatch.setattr(os, "kill", lambda pid, sig: pytest.fail("killed on the way out"))
    acked: list[int] = []
    watcher = _watcher(tmp_path, ckp, after=None, acked=acked)
    watcher.poll_s = 3600  # the thread polls only once stopped
    watcher.start()
    watcher.stop()  # the stop path delivers what Spark committed, with no crash seam
    assert acked == [0, 1]
    assert not [e for e in read_events(tmp_path / "history") if "crash" in e["kind"]]
