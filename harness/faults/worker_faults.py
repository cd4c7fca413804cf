"""worker_kill and worker_pause on a standalone or docker cluster, for any system's run.

kill: kill -9 of the worker's process group (or docker kill), restarted WORKER_RESTART_S
later; pause: SIGSTOP (or docker pause) until the fault's window ends. Each is recorded
as applied only once the cluster's status shows the worker killed or stopped.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from harness.faults.evidence import record_fault
from harness.faults.observe import worker_effect
from harness.faults.schedule import Occurrence
from harness.history import HistoryWriter
from harness.scenario.faults import WorkerKill, WorkerPause

WORKER_RESTART_S = 5.0  # a killed worker's time down


class WorkerFaults:
    """The run's worker faults on `cluster` (an infra.cluster backend), stepped by the
    runner's loop: each fires once at its `at_s`; its undo (restart, resume) follows."""

    def __init__(
        self,
        cluster: Any,
        occurrences: list[Occurrence[Any]],
        history: HistoryWriter,
        mark: Callable[[str], bool],
    ) -> None:
        self.cluster = cluster
        self.history = history
        self.mark = mark  # True the first time a label is marked (the run's fired log)
        self.faults: list[Occurrence[WorkerKill | WorkerPause]] = [
            o for o in occurrences if isinstance(o.fault, WorkerKill | WorkerPause)
        ]
        self._undo: list[tuple[float, Callable[[], Any]]] = []

    def step(self, elapsed: float) -> None:
        for o in self.faults:
            if o.at_s <= elapsed and self.mark(o.label):
                self.apply(o, elapsed)
        for due, undo in list(self._undo):
            if elapsed >= due:
                self._undo.remove((due, undo))
                undo()

    def apply(self, o: Occurrence[WorkerKill | WorkerPause], elapsed: float) -> None:
        n = int(o.fault.target.split(":")[1])
        before = self.cluster.status()
        if isinstance(o.fault, WorkerKill):
            self.cluster.kill_worker(n)
            back = o.at_s + WORKER_RESTART_S
            self._undo.append((back, lambda: self.cluster.restart_worker(n)))
        else:
            self.cluster.pause_worker(n)
            self._undo.append((o.end_s, lambda: self.cluster.resume_worker(n)))
        worker = self.cluster.info.worker(n)
        after = self._worker_after(o.kind, n)
        if after is None:
            return  # the worker never showed the fault: it stays unapplied
        record_fault(
            self.history,
            o,
            elapsed,
            worker=n,
            host=worker.host,
            pid=worker.pid,
            container=worker.container,
            workers_before=before.get("workers"),
            worker_after=after,
        )

    def _worker_after(self, kind: str, n: int, timeout_s: float = 2.0) -> dict[str, Any] | None:
        """Worker n's status once it shows the fault (killed, paused), None if it never did."""
        deadline = time.monotonic() + timeout_s
        while True:
            workers = self.cluster.status().get("workers", [])
            status: dict[str, Any] = next((w for w in workers if w.get("index") == n), {})
            if worker_effect(kind, status):
                return status
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.1)

    def unsettled(self) -> bool:
        """A worker still to restart or resume."""
        return bool(self._undo)
