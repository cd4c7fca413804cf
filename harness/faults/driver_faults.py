"""Faults the pipeline driver applies: writer crashes (via task configs), coordinator
crashes at a seam, lost / late / replayed ACKs, coordinator clock skew, storage faults;
and where the runner pauses it or cuts its links at a seam, it waits there for them."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from engine.clock import AdjustableClock, SystemClock
from harness.faults.crash import mark_missed_crashes, mark_orphaned_crashes
from harness.faults.evidence import FaultRecorder, record_fault
from harness.faults.fired import (
    FiredLog,
    ack_followed,
    ack_handled,
    cut_healed,
    cut_reached,
    pause_reached,
    pause_resumed,
)
from harness.faults.kinds import STALE_REPLAY_AFTER_S
from harness.faults.schedule import F, Occurrence, of_kind
from harness.faults.seams import table_seam_hook
from harness.faults.skew import SkewApplier
from harness.history import HistoryWriter
from harness.run_clock import RunClock
from harness.scenario.faults import (
    ClockSkew,
    CoordinatorCrash,
    CoordinatorPause,
    DelayAck,
    DropAck,
    StaleAck,
    WriterCrash,
)
from harness.scenario.network_faults import Partition

# Delivers one ACK to the coordinator; its future is done once the coordinator handled it,
# with the instants it committed (None: a stale ACK it ignored).
Notify = Callable[[int], "Future[list[str] | None]"]
PAUSE_WAIT_S = 60.0  # how long a driver at a pause seam waits for the runner to pause it
CUT_WAIT_S = 60.0  # past a pinned cut's duration_s, how long a driver waits for its heal


class DriverFaults(FaultRecorder):
    def __init__(
        self,
        occurrences: list[Occurrence[Any]],
        clock: RunClock,
        history: HistoryWriter,
        fired: FiredLog,
    ) -> None:
        super().__init__(clock, history, fired)
        self.occ = occurrences
        # The coordinator's clock (instant and completion times), skewable at run time.
        self.coordinator_clock = AdjustableClock(SystemClock())
        self.skew = SkewApplier(
            [o for o in of_kind(occurrences, ClockSkew) if o.target in ("coordinator", "all")],
            {"coordinator": self.coordinator_clock},
            clock,
            history,
        )
        # The table's own seams (instant creation, commit, rollback, compaction) by name, for
        # the coordinator's table handle: crashes and pauses there as at the commit seams.
        self.table_hook = table_seam_hook(self.coordinator_hook)
        self._timers: set[threading.Timer] = set()  # late ACKs not delivered yet
        self.make_timer = threading.Timer  # tests fire late ACKs by hand
        self._timer_lock = threading.Lock()
        self._stopped = False

    def elapsed(self) -> float:
        return self.clock.elapsed()

    def _due(self, model: type[F]) -> list[Occurrence[F]]:
        now = self.elapsed()
        return [
            o for o in of_kind(self.occ, model) if o.at_s <= now and not self.fired.fired(o.label)
        ]

    # -- writer crashes ----------------------------------------------------------------
    def crash_points(self, batch_id: int) -> dict[int, tuple[str, str]]:
        """Writer tasks to hard-exit in this batch (first attempt only): task -> (point, label)."""
        points: dict[int, tuple[str, str]] = {}
        for o in self._due(WriterCrash):
            if self.fired.mark(o.label):
                task = int(o.fault.target.split(":")[1])
                points[task] = (o.fault.point, o.label)
                self.history.record("fault_armed", label=o.label, batch_id=batch_id, task=task)
        return points

    def batch_finished(self, crash_points: dict[int, tuple[str, str]]) -> None:
        """Every task of the batch these crashes were armed for finished (retries too)."""
        mark_missed_crashes(crash_points, self.fired)

    # -- coordinator crashes -----------------------------------------------------------
    def coordinator_hook(self, point: str, info: dict[str, Any]) -> None:
        for o in self._due(CoordinatorCrash):
            if o.fault.point == point and self.fired.mark(o.label):
                # The runner records the fault once it sees this process exit by SIGKILL.
                self.history.record(
                    "coordinator_crash_point", label=o.label, point=point, pid=os.getpid(), **info
                )
                os.kill(os.getpid(), signal.SIGKILL)  # a real crash of the driver
        # A partition pinned here: the runner cuts the links once it sees the driver here
        # and marks their heal; the coordinator waits, holding what it holds (the table
        # lock at mid_commit).
        for cut in self._due(Partition):
            if cut.fault.point == point:
                wait_s = cut.fault.duration_s + CUT_WAIT_S
                self._hold(cut.label, "cut_reached", (cut_reached, cut_healed), wait_s, point, info)
        # A pause: the runner stops this driver's process group (it records the fault) and
        # starts a successor; the commit in hand continues once it resumes.
        for pause in self._due(CoordinatorPause):
            if pause.fault.point == point:
                marks = (pause_reached, pause_resumed)
                self._hold(pause.label, "pause_reached", marks, PAUSE_WAIT_S, point, info)

    def _hold(
        self,
        label: str,
        event: str,
        marks: tuple[Callable[[str], str], Callable[[str], str]],
        wait_s: float,
        point: str,
        info: dict[str, Any],
    ) -> None:
        """Marks and records that the driver reached a fault's seam, then waits there until
        the runner marks it may go on."""
        reached, go_on = marks
        if not self.fired.mark(reached(label)):
            return
        self.history.record(event, label=label, point=point, **info)
        deadline = time.monotonic() + wait_s
        while not self.fired.fired(go_on(label)):
            if time.monotonic() > deadline:
                break  # the runner never acted (the run ended): go on
            time.sleep(0.05)

    # -- ACKs --------------------------------------------------------------------------
    def deliver_ack(self, batch_id: int, notify: Notify) -> None:
        """Send ACK `batch_id` to the coordinator, unless a fault drops or delays it."""
        due: list[Occurrence[Any]] = [
            *self._due(DropAck),
            *self._due(DelayAck),
            *self._due(StaleAck),
        ]
        for o in due:
            fault: DropAck | DelayAck | StaleAck = o.fault
            # Hits are claimed in the run's fired log: a restarted driver does not start
            # the count again.
            if not self.fired.take(o.label, fault.count):
                continue
            if isinstance(fault, DropAck):  # recorded once a later ACK is handled (below)
                self.history.record("ack", checkpoint_id=batch_id, action="dropped")
                return
            if isinstance(fault, DelayAck):
                delay = fault.delay_s
                self.history.record("ack_delayed", checkpoint_id=batch_id, delay_s=delay)
                self._deliver_later(o, batch_id, notify, delay, delay_s=delay)
                return
            # stale_ack: deliver now, and replay the same ACK later (it must be a no-op)
            self._deliver_later(
                o, batch_id, notify, STALE_REPLAY_AFTER_S, replay_after_s=STALE_REPLAY_AFTER_S
            )
        # Every drop fault due now has had all its hits (else this ACK was dropped above):
        # this delivery is the one that must subsume them, and the fault counts as applied
        # as it goes to the coordinator (not once handled: a coordinator crash at that ACK
        # leaves the subsuming to its successor's recovery, which the checks judge too).
        for o in self._due(DropAck):
            if self.fired.mark(ack_followed(o.label)):
                self._record(o, checkpoint_id=batch_id, dropped=o.fault.count, subsumed_by=batch_id)
        notify(batch_id)

    def _deliver_later(
        self, o: Occurrence[Any], batch_id: int, notify: Notify, after_s: float, **evidence: Any
    ) -> None:
        """Deliver ACK `batch_id` in `after_s`; the fault is recorded once the coordinator
        has handled that ACK, with what it did. A driver that stops first never delivers
        it (stop() cancels the timer), so the fault stays unapplied."""
        held_s = self.elapsed()

        def deliver() -> None:
            with self._timer_lock:  # stop() waits for a delivery under way
                self._timers.discard(timer)
                if self._stopped:
                    return
                delivered_s = self.elapsed()
                ack = notify(batch_id)
            ack.add_done_callback(
                lambda done: self._ack_handled(o, batch_id, held_s, delivered_s, done, **evidence)
            )

        timer = self.make_timer(after_s, deliver)
        timer.daemon = True
        with self._timer_lock:
            if self._stopped:
                return
            self._timers.add(timer)
            timer.start()

    def _ack_handled(
        self,
        o: Occurrence[Any],
        batch_id: int,
        held_s: float,
        delivered_s: float,
        done: Future,
        **evidence: Any,
    ) -> None:
        if done.cancelled():
            return
        error = done.exception()
        if error is not None:
            outcome: dict[str, Any] = {"coordinator": "failed", "error": str(error)}
        elif done.result() is None:
            outcome = {"coordinator": "ignored_stale", "committed": []}
        else:
            outcome = {"coordinator": "committed", "committed": list(done.result())}
        record_fault(
            self.history,
            o,
            held_s,
            checkpoint_id=batch_id,
            delivered_s=round(delivered_s, 3),
            handled_s=round(self.elapsed(), 3),
            **evidence,
            **outcome,
        )
        self.fired.take(ack_handled(o.label), o.fault.count)  # the run may now settle

    def start(self) -> None:
        mark_orphaned_crashes([o.label for o in of_kind(self.occ, WriterCrash)], self.fired)
        self.skew.start()

    def stop(self) -> None:
        """No ACK is delivered after this returns: the coordinator is about to close."""
        with self._timer_lock:
            self._stopped = True
            for timer in self._timers:
                timer.cancel()
            self._timers.clear()
        self.skew.stop()
