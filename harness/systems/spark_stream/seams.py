"""A table format's commit path seen from outside: a driver kill between its commit and
Spark's.

A format's streaming sink commits the micro-batch inside addBatch, the commit naming the
batch (Delta's `txn` action, Iceberg's `spark.sql.streaming.epochId` in the snapshot
summary); Spark writes `commits/N` only after addBatch returns. A driver killed in
between leaves batch N committed in the table and not in Spark, so the restarted query
replays batch N, and only the format's idempotence keeps it from being written twice.
Neither format offers a hook there, so the seam is observed: the commit watch reports a
new commit that names a batch, and if Spark's commit log does not hold that batch yet,
the driver's process group is killed at once. Whether the window held is read again once the group
is dead, when nothing can change any more.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness.pipeline.checkpoints import committed_batches, planned_batches
from harness.systems.spark_stream.commit_watch import SeenCommit


@dataclass
class KillEvidence:
    version: int  # the log version whose appearance fired the kill
    seen_s: float  # monotonic: when the watch saw it
    killed_s: float  # monotonic: when SIGKILL was sent
    table_batch: int  # the batch id the commit records
    planned_at_kill: list[int]
    committed_at_kill: list[int]
    committed_after: list[int] = field(default_factory=list)  # once the group was dead
    in_window: bool = False  # the table committed table_batch, Spark's commit log never did
    missed: list[int] = field(default_factory=list)  # versions seen outside the window

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class KillAfterCommit:
    """`on_new` callback for a CommitWatch: fires `kill` once, as described above."""

    def __init__(self, kill: Callable[[], None], checkpoint_dir: str | Path) -> None:
        self.kill = kill
        self.checkpoint = Path(checkpoint_dir)
        self._missed: list[int] = []
        self._evidence: KillEvidence | None = None
        self._fired = threading.Event()

    def __call__(self, new: list[SeenCommit]) -> None:
        if self._fired.is_set():
            return
        for seen in new:
            batch = seen.batch
            committed = committed_batches(self.checkpoint)
            if batch is None or batch in committed:
                self._missed.append(seen.version)
                continue
            self.kill()
            self._evidence = KillEvidence(
                seen.version,
                seen.seen_s,
                time.monotonic(),
                batch,
                planned_batches(self.checkpoint),
                committed,
                missed=list(self._missed),
            )
            self._fired.set()
            return

    def fired(self) -> KillEvidence | None:
        return self._evidence if self._fired.is_set() else None

    def settle(self) -> KillEvidence | None:
        """The evidence, completed once the killed group is dead (call after reaping it)."""
        evidence = self._evidence
        if evidence is not None:
            evidence.committed_after = committed_batches(self.checkpoint)
            evidence.in_window = evidence.table_batch not in evidence.committed_after
        return evidence
