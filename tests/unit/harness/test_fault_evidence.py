"""A fault is recorded as applied only once its effect was observed (DESIGN.md, Evidence
rules): for each fault kind, no record before the effect, a record after it, and none at
all when the effect never happens. Every ordering is forced by hand (fake timers, fake
sleeps, explicit clock reads), never by timing."""

import os
import signal
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pytest
from fake_acks import FakeCoordinator, FakeTimer
from fault_occurrence import occurrence

from engine.clock import AdjustableClock, ManualClock
from engine.storage import Storage
from harness.faults import crash
from harness.faults import storage as storage_faults
from harness.faults.driver_faults import DriverFaults
from harness.faults.fired import FiredLog
from harness.faults.observe import wait_stopped, worker_effect
from harness.faults.schedule import Occurrence
from harness.faults.skew import SkewApplier
from harness.history import HistoryWriter, read_events
from harness.run_clock import RunClock
from harness.scenario import ScenarioError, load_scenario


def _faults(tmp_path: Path) -> list[dict]:
    return [e for e in read_events(tmp_path / "history") if e["kind"] == "fault"]


def _history(tmp_path: Path, src: str = "driver") -> HistoryWriter:
    return HistoryWriter(tmp_path / "history", src)


# -- clock skew ------------------------------------------------------------------------


def test_the_clock_notes_only_the_first_read_after_each_adjustment() -> None:
    reads = []
    clock = AdjustableClock(ManualClock(1_000_000), on_skewed_read=reads.append)
    clock.now_ms()
    assert reads == []  # no adjustment yet
    n = clock.set_offset_ms(-500)
    assert clock.skew_ms == -500 and reads == []  # a peek is not a read
    assert clock.now_ms() == 999_500
    clock.now_ms()
    assert [(r.adjustment, r.read_ms, r.base_ms, r.skew_ms) for r in reads] == [
        (n, 999_500, 1_000_000, -500)
    ]
    clock.jump_ms(100)
    clock.reset()  # back to true time before anyone read the jump: nothing to note
    clock.now_ms()
    assert len(reads) == 1


def _skew(target: str, at_s: float, end_s: float, **params: float) -> Occurrence:
    return occurrence("clock_skew", 0, at_s, end_s, target, params)


def test_a_skew_is_recorded_when_its_clock_is_read_with_the_value_read(tmp_path: Path) -> None:
    clock = AdjustableClock(ManualClock(1_000_000))
    applier = SkewApplier(
        [_skew("coordinator", 10, 20, offset_ms=-400)],
        {"coordinator": clock},
        RunClock(t0=time.time() - 12),
        _history(tmp_path),
    )
    applier.step(12.0)
    assert clock.skew_ms == -400
    assert _faults(tmp_path) == []  # set, not read: not applied
    assert clock.now_ms() == 999_600  # e.g. an instant time generated now
    clock.now_ms()
    [fault] = _faults(tmp_path)
    assert fault["target"] == "coordinator" and fault["applied"]
    evidence = fault["evidence"]
    assert evidence["read_ms"] == 999_600 and evidence["true_ms"] == 1_000_000
    assert evidence["skew_read_ms"] == -400 and evidence["offset_ms"] == -400


def test_a_skew_nobody_reads_is_never_recorded(tmp_path: Path) -> None:
    clock = AdjustableClock(ManualClock(1_000_000))
    applier = SkewApplier(
        [_skew("coordinator", 10, 20, jump_ms=300), _skew("coordinator", 30, 40, jump_ms=300)],
        {"coordinator": clock},
        RunClock(t0=time.time() - 12),
        _history(tmp_path),
    )
    applier.step(12.0)
    applier.step(20.0)  # the window ends unread
    clock.now_ms()
    applier.step(31.0)
    applier.stop()  # the run ends before the second skew is read
    clock.now_ms()
    assert _faults(tmp_path) == []


# -- ACKs: delayed and replayed --------------------------------------------------------


def _driver(tmp_path: Path, *occurrences: Occurrence) -> DriverFaults:
    faults = DriverFaults(
        list(occurrences), RunClock(t0=time.time() - 20), _history(tmp_path), FiredLog(tmp_path)
    )
    FakeTimer.made = []
    faults.make_timer = FakeTimer
    return faults


def test_a_delayed_ack_is_recorded_once_the_coordinator_committed_it(tmp_path: Path) -> None:
    faults = _driver(tmp_path, occurrence("delay_ack", 0, 10, 10, "coordinator", {"delay_s": 3}))
    coordinator = FakeCoordinator()
    faults.deliver_ack(7, coordinator.notify)
    [timer] = FakeTimer.made
    assert timer.started and timer.interval == 3
    assert coordinator.acks == [] and _faults(tmp_path) == []  # held back
    timer.fire()
    [(checkpoint, done)] = coordinator.acks
    assert checkpoint == 7 and _faults(tmp_path) == []  # sent, not handled yet
    done.set_result(["20261122101010101", "20261122101012101"])
    [fault] = _faults(tmp_path)
    assert fault["fault_kind"] == "delay_ack"
    evidence = fault["evidence"]
    assert evidence["checkpoint_id"] == 7 and evidence["delay_s"] == 3
    assert evidence["coordinator"] == "committed"
    assert evidence["committed"] == ["20261122101010101", "20261122101012101"]


def test_a_replayed_ack_is_recorded_as_the_no_op_the_coordinator_made_it(tmp_path: Path) -> None:
    faults = _driver(tmp_path, occurrence("stale_ack", 0, 10, 10, "coordinator", {}))
    coordinator = FakeCoordinator()
    faults.deliver_ack(3, coordinator.notify)
    assert [c for c, _ in coordinator.acks] == [3]  # the ACK itself goes now
    coordinator.acks[0][1].set_result(["20261122101010101"])
    assert _faults(tmp_path) == []  # that is no replay yet
    FakeTimer.made[0].fire()
    assert [c for c, _ in coordinator.acks] == [3, 3]
    assert _faults(tmp_path) == []
    coordinator.acks[1][1].set_result(None)  # the coordinator ignored the stale ACK
    [fault] = _faults(tmp_path)
    assert fault["evidence"]["coordinator"] == "ignored_stale"
    assert fault["evidence"]["committed"] == []


def test_a_late_ack_is_not_delivered_into_a_stopped_driver(tmp_path: Path) -> None:
    faults = _driver(tmp_path, occurrence("delay_ack", 0, 10, 10, "coordinator", {"delay_s": 3}))
    coordinator = FakeCoordinator()
    faults.deliver_ack(7, coordinator.notify)
    faults.stop()
    [timer] = FakeTimer.made
    assert timer.cancelled
    timer.fire()  # a timer thread that had already started when the driver stopped
    assert coordinator.acks == [] and _faults(tmp_path) == []


# -- storage ---------------------------------------------------------------------------


def _storage(tmp_path: Path, *occurrences: Occurrence, target: str | None = None):
    faults = storage_faults.StorageFaults(
        list(occurrences),
        RunClock(t0=time.time() - 20),
        _history(tmp_path),
        FiredLog(tmp_path / "fired"),
        target=target,
    )
    return faults.install(Storage(str(tmp_path / "table")))


def test_storage_latency_is_recorded_after_an_operation_was_held_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    slept: list[tuple[float, int]] = []

    def sleep(seconds: float) -> None:  # the delay: what the history holds while it lasts
        slept.append((seconds, len(_faults(tmp_path))))

    monkeypatch.setattr(
        storage_faults, "time", SimpleNamespace(sleep=sleep, monotonic=time.monotonic)
    )
    latency = occurrence("storage_latency", 0, 10, 30, None, {"latency_ms": 80, "ops": ["put"]})
    storage = _storage(tmp_path, latency)
    storage.list("")  # not a slowed op
    assert slept == [] and _faults(tmp_path) == []
    storage.write_bytes("a", b"x")
    storage.write_bytes("b", b"x")
    assert slept == [(0.08, 0), (0.08, 1)]  # no record during the first delay, one after
    [fault] = _faults(tmp_path)
    assert fault["evidence"]["first_op"] == "put" and "held_ms" in fault["evidence"]


def test_a_storage_error_is_recorded_with_the_operation_it_failed(tmp_path: Path) -> None:
    error = occurrence("storage_error", 0, 10, 10, None, {"op": "put", "count": 1})
    storage = _storage(tmp_path, error)
    storage.makedirs("")
    with pytest.raises(storage_faults.InjectedStorageError):
        storage.write_bytes("a", b"x")
    assert not storage.exists("a")  # the operation really failed
    storage.write_bytes("b", b"x")  # count 1: the next one goes through
    [fault] = _faults(tmp_path)
    assert fault["evidence"]["op"] == "put" and fault["evidence"]["path"].endswith("/a")


def test_a_torn_file_is_recorded_with_the_size_that_landed(tmp_path: Path) -> None:
    torn = occurrence("torn_file", 0, 10, 10, "writer:0", {"count": 1})
    storage = _storage(tmp_path, torn, target="writer:0")
    storage.verify_writes = False
    size = storage.write_parquet("f.parquet", pa.table({"a": list(range(1000))}))
    [fault] = _faults(tmp_path)
    landed = os.path.getsize(tmp_path / "table" / "f.parquet")
    assert fault["evidence"]["size"] == size and fault["evidence"]["truncated_to"] == landed
    assert landed == size // 2
    # Another writer's files are not its target.
    other = _storage(tmp_path / "other", torn, target="writer:1")
    other.verify_writes = False
    other.write_parquet("g.parquet", pa.table({"a": [1]}))
    assert len(_faults(tmp_path)) == 1


def test_storage_faults_reach_the_readers_and_batch_writers(tmp_path: Path) -> None:
    from engine.config import TableConfig
    from engine.table import Table
    from harness.pipeline.events import SCHEMA
    from harness.workload.background import start_background

    Table.create(str(tmp_path / "t"), TableConfig(key_field="id"), SCHEMA).close()
    yaml = tmp_path / "s.yaml"
    yaml.write_text(
        "name: s\nreaders: {concurrent: 2, every_s: 1000}\n"
        "batch_writers: {count: 1, every_s: 1000, op: upsert}\n"
    )
    latency = occurrence("storage_latency", 0, 0, 1e9, None, {"latency_ms": 1})
    faults = storage_faults.StorageFaults(
        [latency], RunClock(t0=time.time()), _history(tmp_path), FiredLog(tmp_path / "fired")
    )
    background = start_background(
        load_scenario(yaml), str(tmp_path / "t"), _history(tmp_path), faults
    )
    try:
        threads = [*background.readers, *background.writers]
        assert len(threads) == 3
        for thread in threads:
            assert faults._before in thread.table.storage.hooks
            thread.table.storage.list("")
    finally:
        background.stop()
    assert len([f for f in _faults(tmp_path) if f["fault_kind"] == "storage_latency"]) == 1


# -- crashes and pauses ----------------------------------------------------------------


class Exited(Exception):
    pass


def test_a_writer_crash_is_recorded_by_the_retry_of_the_task_that_died(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def exit_(code: int) -> None:
        raise Exited(code)

    monkeypatch.setattr(crash.os, "_exit", exit_)
    fired, history = FiredLog(tmp_path / "fired"), _history(tmp_path, "writer:1")
    points = {1: ("mid_flush", "writer_crash@writer:1#0")}
    args = (points, 1)
    crash.record_writer_retry(*args, 0, 5, 12.0, history, fired)  # the first attempt
    hook = crash.writer_crash_hook(*args, 0, 5, history, fired)
    hook("before_flush", {})
    with pytest.raises(Exited):
        hook("mid_flush", {"instant": "20261122101010101"})
    assert _faults(tmp_path) == []  # about to die is not dead
    crash.record_writer_retry(*args, 1, 5, 13.0, history, fired)  # Spark's retry
    crash.record_writer_retry(*args, 2, 5, 14.0, history, fired)  # a later one: no twice
    [fault] = _faults(tmp_path)
    assert fault["evidence"]["attempt"] == 0 and fault["evidence"]["retry_attempt"] == 1


def test_a_retry_without_the_crash_records_nothing(tmp_path: Path) -> None:
    fired, history = FiredLog(tmp_path / "fired"), _history(tmp_path, "writer:1")
    points = {1: ("after_event", "writer_crash@writer:1#0")}
    crash.record_writer_retry(points, 1, 1, 5, 13.0, history, fired)  # failed for another reason
    assert _faults(tmp_path) == []


def test_a_coordinator_crash_is_recorded_when_the_driver_is_seen_killed(tmp_path: Path) -> None:
    fired, history = FiredLog(tmp_path / "fired"), _history(tmp_path, "runner")
    o = occurrence("coordinator_crash", 0, 10, 10, "coordinator", {"point": "mid_commit"})
    crash.record_coordinator_crashes([o], fired, history, 11.0, 4242, -signal.SIGKILL)
    assert _faults(tmp_path) == []  # the driver never reached the seam: another death
    fired.mark(o.label)  # the driver at the seam, about to SIGKILL itself
    crash.record_coordinator_crashes([o], fired, history, 11.0, 4242, 3)
    assert _faults(tmp_path) == []  # it exited some other way
    for _ in range(2):
        crash.record_coordinator_crashes([o], fired, history, 12.0, 4242, -signal.SIGKILL)
    [fault] = _faults(tmp_path)
    assert fault["evidence"] == {"pid": 4242, "exit_code": -9, "point": "mid_commit"}


def test_a_pause_is_observed_as_a_stopped_process() -> None:
    proc = subprocess.Popen(["sleep", "30"])
    try:
        assert wait_stopped(proc.pid, timeout_s=0.1) is None  # running, not stopped
        os.kill(proc.pid, signal.SIGSTOP)
        assert wait_stopped(proc.pid) in ("T", "t")
    finally:
        proc.kill()
        proc.wait()
    assert wait_stopped(proc.pid, timeout_s=0.1) is None  # gone


def test_worker_faults_need_the_worker_to_show_them() -> None:
    assert worker_effect("worker_kill", {"alive": False})
    assert not worker_effect("worker_kill", {"alive": True})
    assert worker_effect("worker_pause", {"process_state": "T"})
    assert worker_effect("worker_pause", {"container_status": "paused"})
    assert not worker_effect("worker_pause", {"process_state": "S", "container_status": None})


# -- faults that could not change anything are refused ---------------------------------


def _refused(tmp_path: Path, text: str) -> str:
    path = tmp_path / "f.yaml"
    path.write_text("name: f\n" + text)
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    return str(info.value)


@pytest.mark.parametrize("target", ["writer:0", "worker:1"])
def test_a_clock_skew_nothing_reads_is_refused_naming_the_targets_that_work(
    tmp_path: Path, target: str
) -> None:
    """Writer tasks never read a clock (tests/unit/stream/test_writer_clock.py), and they are
    all the engine runs on a cluster worker: both targets would change nothing."""
    message = _refused(
        tmp_path,
        "cluster: {backend: standalone, workers: 2}\nbatch_writers: {count: 2}\n"
        f"faults: [{{kind: clock_skew, at_s: 5, target: '{target}', offset_ms: -300}}]\n",
    )
    [line] = message.splitlines()
    assert line.startswith(f"{tmp_path / 'f.yaml'}: faults.0.target: '{target}' is not a valid")
    assert "allowed: coordinator | batch_writer:N | all" in line
    assert "no clock there is read for instant times or heartbeats" in line


def test_a_batch_writer_skew_without_batch_writers_names_the_targets_that_work(
    tmp_path: Path,
) -> None:
    message = _refused(
        tmp_path, "faults: [{kind: clock_skew, at_s: 5, target: 'batch_writer:0', jump_ms: 9}]\n"
    )
    assert "faults.0.target: there are no batch_writers (batch_writers.count is 0)" in message
    assert "allowed: coordinator | all" in message


def test_engine_faults_are_refused_on_the_raw_parquet_sink(tmp_path: Path) -> None:
    message = _refused(
        tmp_path, "engine: {sink: raw_parquet}\nfaults: [{kind: drop_ack, at_s: 5}]\n"
    )
    assert "faults.0.kind: drop_ack acts through the table engine" in message
    assert "allowed with it: worker_kill, worker_pause" in message


@pytest.mark.parametrize(
    ("fault", "expected"),
    [
        (
            "{kind: delay_ack, at_s: 58, delay_s: 3}",
            "faults.0.delay_s: an ACK held at 58 s would reach the coordinator 3 s later, after "
            "the run ends at 60 s, so the fault could never take effect; allowed: delay_s < 2",
        ),
        ("{kind: stale_ack, at_s: 57}", "faults.0.at_s: an ACK held at 57 s would reach"),
        ("{kind: delay_ack, at_s: 10, every_s: 20, delay_s: 15}", "the last ACK it holds, at 50"),
    ],
    ids=["delay", "stale", "repeated"],
)
def test_an_ack_that_would_arrive_after_the_run_is_refused(
    tmp_path: Path, fault: str, expected: str
) -> None:
    """A late or replayed ACK counts once the coordinator handled it: one due after the end
    is never delivered, so the run could only ever end unknown."""
    run = "warmup_s: 10\nduration_s: 50\n"
    message = _refused(tmp_path, f"{run}faults: [{fault}]\n")
    [line] = message.splitlines()
    assert expected in line
    ok = tmp_path / "ok.yaml"
    ok.write_text(f"name: ok\n{run}faults: [{{kind: delay_ack, at_s: 50, delay_s: 3}}]\n")
    assert load_scenario(ok).faults[0].kind == "delay_ack"
