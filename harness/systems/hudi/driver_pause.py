"""Hudi's stream driver stopped inside its commit while a successor takes over the same
checkpoint, then resumed (`coordinator_pause` at `mid_commit` on Hudi: a zombie driver).

When the timeline watch sees the sink's instant requested or inflight and not completed
(harness/systems/hudi/seams.py, KillMidCommit's seam), the driver, its JVM and whatever
they started get SIGSTOP instead of SIGKILL. The runner then starts a successor driver on
the same Spark checkpoint, as an orchestrator that lost the driver's heartbeat would: it
replays the batch the stopped one was writing. Once the successor's commit log holds that
batch and duration_s passed, the old driver gets SIGCONT and carries on inside Hudi's
commit, on a table that moved on without it: nothing but Hudi's own checks stands between
its stale commit and the table.

Applied only once its effect was seen: every process of the driver stopped while its
instant was inflight and its batch not in Spark's commit log, and the successor committed
that batch while it stood.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from harness.faults.evidence import record_fault
from harness.faults.schedule import Occurrence
from harness.history import HistoryWriter
from harness.pipeline.checkpoints import committed_batches
from harness.systems.hudi.process_tree import halted, signal_tree, signal_tree_of
from harness.systems.hudi.seams import KillEvidence
from harness.systems.spark_stream.driver_process import DriverProcess

TAKEOVER_GRACE_S = 60.0  # past duration_s, how long the stopped driver waits for its successor


@dataclass
class DriverPause:
    """One paused driver, from the moment its seam fired until it was resumed."""

    occurrence: Occurrence[Any]
    zombie: DriverProcess
    checkpoint: Path
    stopped: list[psutil.Process] = field(default_factory=list)
    evidence: KillEvidence | None = None
    paused_s: float = 0.0
    successor_pid: int | None = None
    taken_over_s: float | None = None  # the successor's commit log held the batch
    resumed_s: float | None = None

    def stop_now(self) -> None:
        """The seam's action (from the timeline watch's thread): stop, do not kill."""
        self.stopped = signal_tree(self.zombie.process.pid, signal.SIGSTOP)

    def confirm(self, evidence: KillEvidence | None, elapsed: float) -> bool:
        """Whether the stop landed in the seam's window: every process halted, the instant
        still not completed and the batch not in Spark's commit log."""
        self.evidence, self.paused_s = evidence, elapsed
        return evidence is not None and evidence.in_window and halted(self.stopped)

    def step(self, elapsed: float, history: HistoryWriter) -> None:
        if self.resumed_s is not None or self.evidence is None:
            return
        batch = self.evidence.batch
        if self.taken_over_s is None and batch in committed_batches(self.checkpoint):
            self.taken_over_s = elapsed
        stood = elapsed - self.paused_s
        duration = float(self.occurrence.fault.duration_s)
        taken_over = self.taken_over_s is not None
        if stood >= duration and (taken_over or stood >= duration + TAKEOVER_GRACE_S):
            self.release()
            self.resumed_s = elapsed
            if taken_over:
                record_fault(history, self.occurrence, self.paused_s, **self.proof())

    def proof(self) -> dict[str, Any]:
        assert self.evidence is not None
        return {
            **self.evidence.to_dict(),
            "point": "mid_commit",
            "stopped_processes": len(self.stopped),
            "zombie_pid": self.zombie.process.pid,
            "successor_pid": self.successor_pid,
            "successor_committed_batch_s": self.taken_over_s,
            "resumed_s": self.resumed_s,
        }

    def unsettled(self) -> bool:
        return self.resumed_s is None

    def release(self) -> None:
        """SIGCONT everything stopped (also when the run stops early)."""
        if self.resumed_s is None:
            signal_tree_of(self.stopped, signal.SIGCONT)
