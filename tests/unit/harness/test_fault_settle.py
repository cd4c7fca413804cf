"""A run goes on past its duration until its faults have had their effect
(harness/faults/settle.py): dropped ACKs until one ACK after them was delivered, delayed
ACKs until the coordinator handled each, crashes
until their seam was reached, a writer crash until its retry recorded it. Each state is
forced by the calls the driver would make."""

from __future__ import annotations

import time
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from fake_acks import FakeCoordinator, FakeTimer
from fault_occurrence import occurrence

from harness.faults.crash import exited, missed, record_writer_retry
from harness.faults.driver_faults import DriverFaults
from harness.faults.fired import FiredLog
from harness.faults.schedule import Occurrence
from harness.faults.settle import unsettled
from harness.history import HistoryWriter
from harness.run_clock import RunClock


def test_dropped_acks_settle_only_once_a_later_ack_was_delivered(tmp_path: Path) -> None:
    drop = occurrence("drop_ack", 0, 8.0, 8.0, "coordinator", {"count": 2})
    fired = FiredLog(tmp_path / "fired")
    history = HistoryWriter(tmp_path / "history", "driver")
    faults = DriverFaults([drop], RunClock(t0=time.time() - 9), history, fired)
    delivered: list[int] = []

    def notify(batch_id: int) -> Future:
        delivered.append(batch_id)
        return Future()

    assert unsettled([drop], fired, run_s=24.0) == [drop.label]  # no batch came yet
    faults.deliver_ack(1, notify)
    faults.deliver_ack(2, notify)
    assert delivered == [] and unsettled([drop], fired, run_s=24.0) == [drop.label]
    faults.deliver_ack(3, notify)  # the ACK that subsumes both
    assert delivered == [3] and unsettled([drop], fired, run_s=24.0) == []


def test_delayed_acks_settle_only_once_the_coordinator_handled_each(tmp_path: Path) -> None:
    """detect/cow-upsert-blocking ended on its clock with its delayed ACKs still held (a
    loaded machine's first batches came late): the stop cancelled them, and the lost
    updates they would have caused never happened."""
    delay = occurrence("delay_ack", 0, 8.0, 8.0, "coordinator", {"count": 2, "delay_s": 4})
    history = HistoryWriter(tmp_path / "history", "driver")
    faults = DriverFaults([delay], RunClock(t0=time.time() - 9), history, FiredLog(tmp_path / "f"))
    FakeTimer.made = []
    faults.make_timer = FakeTimer
    coordinator = FakeCoordinator()
    faults.deliver_ack(1, coordinator.notify)
    faults.deliver_ack(2, coordinator.notify)
    assert unsettled([delay], faults.fired, run_s=24.0) == [delay.label]  # both held
    for timer in FakeTimer.made:
        timer.fire()
    (_, first), (_, second) = coordinator.acks
    first.set_result(["20261202101010101"])
    assert unsettled([delay], faults.fired, run_s=24.0) == [delay.label]  # one still open
    second.set_result(None)  # subsumed by the first: ignored as stale, but handled
    assert unsettled([delay], faults.fired, run_s=24.0) == []


def test_a_coordinator_crash_settles_once_its_seam_fired(tmp_path: Path) -> None:
    crash = occurrence(
        "coordinator_crash", 1, 14.0, 14.0, "coordinator", {"point": "after_ack_before_commit"}
    )
    fired = FiredLog(tmp_path / "fired")
    assert unsettled([crash], fired, run_s=24.0) == [crash.label]
    fired.mark(crash.label)  # what coordinator_hook does right before SIGKILL
    assert unsettled([crash], fired, run_s=24.0) == []


def _writer_crash_armed(tmp_path: Path) -> tuple[Occurrence[Any], DriverFaults, dict]:
    writer = occurrence("writer_crash", 2, 5.0, 5.0, "writer:0", {"point": "mid_flush"})
    history = HistoryWriter(tmp_path / "history", "driver")
    faults = DriverFaults([writer], RunClock(t0=time.time() - 6), history, FiredLog(tmp_path / "f"))
    assert unsettled([writer], faults.fired, run_s=24.0) == [writer.label]  # not armed yet
    points = faults.crash_points(3)  # the batch that arms it
    assert points == {0: ("mid_flush", writer.label)}
    return writer, faults, points


def test_a_writer_crash_settles_only_once_its_retry_recorded_it(tmp_path: Path) -> None:
    """The locks suite's writer-crash-storage-s3 ended unknown: the worker exited as the
    run's stop came, and stopping the stream cancelled the retry that records the crash."""
    writer, faults, points = _writer_crash_armed(tmp_path)
    assert unsettled([writer], faults.fired, run_s=24.0) == [writer.label]  # armed only
    faults.fired.mark(exited(writer.label))  # the worker, just before its hard exit
    assert unsettled([writer], faults.fired, run_s=24.0) == [writer.label]  # dead, no retry
    history = HistoryWriter(tmp_path / "history", "writer")
    record_writer_retry(points, 0, 1, 3, 12.0, history, faults.fired)  # Spark's retry
    faults.batch_finished(points)
    assert unsettled([writer], faults.fired, run_s=24.0) == []
    assert not faults.fired.fired(missed(writer.label))


def test_a_writer_crash_whose_batch_never_reached_its_seam_is_not_waited_for(
    tmp_path: Path,
) -> None:
    writer, faults, points = _writer_crash_armed(tmp_path)
    faults.batch_finished(points)  # every task done, none exited: it never will
    assert unsettled([writer], faults.fired, run_s=24.0) == []
    assert faults.fired.fired(missed(writer.label))


def test_a_writer_crash_armed_by_a_driver_that_died_is_not_waited_for(tmp_path: Path) -> None:
    """A coordinator crash in the batch that armed a writer crash kills the batch with the
    driver: no retry will come. The next driver, at its start, stops the run waiting for
    it (it waited its whole settle limit before); one already recorded stays recorded, and
    a crash not armed yet is still waited for."""
    writer, first, _ = _writer_crash_armed(tmp_path)
    later = occurrence("writer_crash", 3, 8.0, 8.0, "writer:1", {"point": "mid_flush"})
    first.fired.mark(exited(writer.label))  # the worker exits; then the driver is killed
    history = HistoryWriter(tmp_path / "history", "driver")
    clock = RunClock(t0=time.time() - 20)
    successor = DriverFaults([writer, later], clock, history, FiredLog(tmp_path / "f"))
    assert unsettled([writer, later], successor.fired, run_s=24.0) == [writer.label, later.label]
    successor.start()
    successor.stop()
    assert unsettled([writer, later], successor.fired, run_s=24.0) == [later.label]
    assert successor.fired.fired(missed(writer.label))
    assert not successor.fired.fired(missed(later.label))


def test_a_recorded_writer_crash_is_not_marked_missed_by_a_later_driver(tmp_path: Path) -> None:
    writer, first, points = _writer_crash_armed(tmp_path)
    first.fired.mark(exited(writer.label))
    record_writer_retry(points, 0, 1, 3, 12.0, HistoryWriter(tmp_path / "h", "w"), first.fired)
    clock = RunClock(t0=time.time() - 20)
    successor = DriverFaults([writer], clock, first.history, FiredLog(tmp_path / "f"))
    successor.start()
    successor.stop()
    assert not successor.fired.fired(missed(writer.label))


def test_faults_after_the_run_and_timed_faults_are_not_waited_for(tmp_path: Path) -> None:
    late = occurrence("drop_ack", 0, 30.0, 30.0, "coordinator", {"count": 1})
    skew = occurrence("clock_skew", 1, 5.0, 24.0, "coordinator", {"offset_ms": -500.0})
    assert unsettled([late, skew], FiredLog(tmp_path / "fired"), run_s=24.0) == []
