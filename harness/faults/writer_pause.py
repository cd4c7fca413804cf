"""`batch_writer_pause`: a batch writer stops inside its critical section (holding the
table lock) until its lease ran out and another writer took the lock, then goes on.

Why block the thread rather than SIGSTOP a process. Batch writers are threads of the runner
process (harness/workload/batch_writers.py), which also runs the readers, the history and
the fault clock, so a signal cannot stop one writer alone; moving each writer into its own
process would buy nothing the table can tell apart. What a stopped process does to the
table is: no storage operation and no lease renewal. Blocking the writer's thread at the
seam gives exactly that: the thread does nothing while it waits, and its lock's renewal
thread (the only other thread acting for it) is suspended (`suspend_renewal` of its lock
provider; ZooKeeper: its session sends no heartbeat),
so its lease really runs out and a waiter takes it over by the lock's own rule. Resumed,
the writer's renewal starts again (a CAS that fails once the lease moved on) and its
critical write either lands (fencing off: the anomaly) or is refused (fencing on).

The one storage read while stopped is the pause's own look at the lease register (has
another holder taken it?), a read that changes nothing. The instant's heartbeat thread
keeps beating: heartbeats only decide lazy rollback, which this fault is not about.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from engine.locks.base import LockProvider
from harness.faults.evidence import record_fault
from harness.faults.schedule import Occurrence, of_kind
from harness.faults.seams import table_seam_hook
from harness.history import HistoryWriter
from harness.run_clock import RunClock
from harness.scenario.faults import BatchWriterPause

# Past duration_s, how much longer it waits for the lease to be taken over.
TAKEOVER_WAIT_S = 30.0
POLL_S = 0.2


class WriterPause:
    """The pauses of one batch writer, installed as a hook on its table's fence."""

    def __init__(
        self,
        occurrences: list[Occurrence[BatchWriterPause]],
        clock: RunClock,
        history: HistoryWriter,
        lock: LockProvider,
        stop: threading.Event,
        monotonic: Any = time.monotonic,
    ) -> None:
        self.pending = list(occurrences)
        self.clock, self.history, self.lock, self.stop = clock, history, lock, stop
        self.monotonic = monotonic
        self.hook = table_seam_hook(self.at_point)

    def at_point(self, point: str, info: dict[str, Any]) -> None:
        elapsed = self.clock.elapsed()
        for o in list(self.pending):
            if o.fault.point == point and o.at_s <= elapsed:
                self.pending.remove(o)
                self._pause(o, point, elapsed, info)

    def _pause(
        self, o: Occurrence[BatchWriterPause], point: str, start_s: float, info: dict[str, Any]
    ) -> None:
        token = self.lock.token
        self.history.record("pause_reached", label=o.label, point=point, token=token, **info)
        self._renewal(suspended=True)
        t0 = self.monotonic()
        duration = o.fault.duration_s
        taken_by = None
        while not self.stop.is_set():
            waited = self.monotonic() - t0
            if waited >= duration:
                taken_by = self._taken_by(token)
                if taken_by is not None or waited >= duration + TAKEOVER_WAIT_S:
                    break
            self.stop.wait(POLL_S)
        self._renewal(suspended=False)
        if taken_by is None:
            # Nobody took the lock over (the run ended first, or no writer wanted it within
            # the wait): the writer never was a stale holder, so the fault had no effect and
            # stays unapplied (the run is unknown, not valid).
            return
        record_fault(
            self.history,
            o,
            start_s,
            point=point,
            paused_s=round(self.monotonic() - t0, 3),
            token=token,
            lease_taken_over=True,
            taken_by=taken_by,
            **info,
        )

    def _renewal(self, suspended: bool) -> None:
        self.lock.suspend_renewal(suspended)

    def _taken_by(self, token: object) -> str | None:
        """Who took the lock after our hold (its new holder, or one that since freed it);
        None while our hold is still the newest (engine/locks/base.py: `successor`)."""
        return self.lock.successor(token)


def install_writer_pauses(
    occurrences: list[Occurrence[Any]], writers: list[Any], clock: RunClock, history: HistoryWriter
) -> None:
    """Hook each batch writer's `batch_writer_pause` occurrences into its table."""
    for writer in writers:
        mine = [o for o in of_kind(occurrences, BatchWriterPause) if o.target == writer.name_]
        if mine:
            pause = WriterPause(mine, clock, history, writer.table.lock, writer.stop_event)
            writer.table.fence.hooks.append(pause.hook)
