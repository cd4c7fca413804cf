"""Hudi's commit path seen from outside: a process kill between Hudi's commit and Spark's.

Hudi's streaming sink commits the micro-batch's instant inside addBatch; Spark writes
`commits/N` only after addBatch returns. A driver killed in between leaves batch N
committed in Hudi and not in Spark, so the restarted query replays batch N, and only the
sink's own checkpoint in the commit metadata keeps it from being written twice (the shape
of apache/hudi#6098). Hudi offers no hook there, so the seam is observed: the timeline
watch reports a completed data instant, and if Spark's commit log does not yet hold the
batch that instant committed, the driver's process group is killed at once.

The batch Hudi committed is read from the completed instant's commit metadata (the sink's
checkpoint for this identifier) before the kill; whether Spark's commit log held it is
read again after the kill, when nothing can change any more. If the window never
shows (every completion is seen only after Spark's commit), the kill falls back, after
`window_for_s`, to the next completed data instant, and the evidence says so.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.pipeline.checkpoints import committed_batches, planned_batches
from harness.systems.hudi.timeline_watch import SeenInstant, instant_path, sink_batch


@dataclass
class KillEvidence:
    instant: str  # the completed instant file whose appearance fired the kill
    seen_s: float  # monotonic: when the watch saw it
    killed_s: float  # monotonic: when SIGKILL was sent
    planned_at_kill: list[int]  # Spark's offsets/ ids, listed just after the kill
    committed_at_kill: list[int]  # Spark's commits/ ids, listed just before the kill
    committed_after: list[int] = field(default_factory=list)  # once the group was dead
    hudi_batch: int | None = None  # the batch id the instant's sink checkpoint records
    in_window: bool = False  # Hudi committed hudi_batch, Spark's commit log never held it
    fallback: bool = False  # the window never showed: killed at the next completion
    missed: list[str] = field(default_factory=list)  # completions seen outside the window

    @property
    def batch(self) -> int | None:
        """The batch Spark planned and had not committed when the process died."""
        pending = [b for b in self.planned_at_kill if b not in self.committed_after]
        return pending[-1] if pending else None

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "batch": self.batch}


class KillBetweenCommits:
    """`on_new` callback for a TimelineWatch: fires `kill` once, as described above."""

    def __init__(
        self,
        kill: Callable[[], None],
        checkpoint_dir: str | Path,
        table_path: str | Path,
        identifier: str,
        actions: Sequence[str] = ("deltacommit",),  # MOR writes; ("commit",) for COW
        window_for_s: float = 30.0,
    ) -> None:
        self.kill = kill
        self.checkpoint = Path(checkpoint_dir)
        self.table_path = Path(table_path)
        self.identifier = identifier
        self.actions = tuple(actions)
        self.window_for_s = window_for_s
        self._armed_s = time.monotonic()
        self._missed: list[str] = []
        self._evidence: KillEvidence | None = None
        self._fired = threading.Event()

    def arm(self) -> None:
        """Start the window's clock (when the data starts flowing)."""
        self._armed_s = time.monotonic()

    def __call__(self, new: list[SeenInstant]) -> None:
        if self._fired.is_set():
            return
        for entry in new:
            if entry.state != "completed" or entry.action not in self.actions:
                continue
            # Which batch Hudi just committed: its commit metadata says (an Avro file of a
            # few KB, read in about a millisecond; Spark's commit takes far longer).
            path = instant_path(self.table_path, entry.name)
            hudi_batch = sink_batch(path, self.identifier) if path else None
            committed = committed_batches(self.checkpoint)
            in_window = hudi_batch is not None and hudi_batch not in committed
            fallback = time.monotonic() - self._armed_s > self.window_for_s
            if not in_window and not fallback:
                self._missed.append(entry.name)
                continue
            self.kill()
            killed = time.monotonic()
            self._evidence = KillEvidence(
                entry.name,
                entry.seen_s,
                killed,
                planned_batches(self.checkpoint),
                committed,
                hudi_batch=hudi_batch,
                fallback=not in_window,
                missed=list(self._missed),
            )
            self._fired.set()
            return

    def wait(self, timeout_s: float) -> KillEvidence | None:
        """The evidence once the kill fired (None if it did not in time)."""
        return self._evidence if self._fired.wait(timeout_s) else None

    def settle(self) -> KillEvidence | None:
        """Complete the evidence once the killed group is dead (call after reaping it): the
        window held if Spark's commit log still lacks the batch Hudi had committed."""
        evidence = self._evidence
        if evidence is None:
            return None
        evidence.committed_after = committed_batches(self.checkpoint)
        batch = evidence.hudi_batch
        evidence.in_window = batch is not None and batch not in evidence.committed_after
        return evidence


class KillMidCommit(KillBetweenCommits):
    """The driver killed inside Hudi's commit: an instant of the sink's action is on the
    timeline as requested or inflight and not completed. The window held if, once the
    group is dead, the instant is still not completed (a rollback of it is Hudi's job on
    the next start) and Spark's commit log lacks the batch Spark had planned."""

    def __call__(self, new: list[SeenInstant]) -> None:
        if self._fired.is_set():
            return
        for entry in new:
            if entry.state == "completed" or entry.action not in self.actions:
                continue
            self.kill()
            self._evidence = KillEvidence(
                entry.name,
                entry.seen_s,
                time.monotonic(),
                planned_batches(self.checkpoint),
                committed_batches(self.checkpoint),
            )
            self._fired.set()
            return

    def settle(self) -> KillEvidence | None:
        evidence = self._evidence
        if evidence is None:
            return None
        evidence.committed_after = committed_batches(self.checkpoint)
        requested = evidence.instant.split(".", 1)[0]
        timeline = self.table_path / ".hoodie" / "timeline"
        done = [p.name for p in timeline.glob(f"{requested}_*")] if timeline.is_dir() else []
        evidence.in_window = not done and evidence.batch is not None
        return evidence


class KillMidRetry(KillMidCommit):
    """The driver killed while Hudi's sink retries a batch the harness failed: once every
    attempt of one of its tasks died (`failed()` returns the claims), the next data
    instant requested after the instant that was pending then is the retry's; the kill
    follows its file. The window held if, once the group is dead, that instant has not
    completed and Spark's commit log still lacks the failed batch."""

    def __init__(self, *args: Any, failed: Callable[[], dict[str, Any] | None], **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.failed = failed
        self.failure: dict[str, Any] | None = None

    def __call__(self, new: list[SeenInstant]) -> None:
        if self._fired.is_set():
            return
        self.failure = self.failure or self.failed()
        if self.failure is None:
            return
        failed_at = max(self.failure["pending_instants"])
        retry = [
            e
            for e in new
            if e.state != "completed" and e.action in self.actions and e.requested > failed_at
        ]
        super().__call__(retry)

    def settle(self) -> KillEvidence | None:
        evidence = super().settle()
        if evidence is None or self.failure is None:
            return evidence
        batch = self.failure.get("batch_id")
        failed_batch = int(batch) if batch is not None else None
        evidence.hudi_batch = failed_batch
        evidence.in_window = evidence.in_window and failed_batch not in evidence.committed_after
        return evidence
