"""A scripted stand-in for the Spark pipeline (like Hudi's TestWriteBase.TestHarness).

Batch b is checkpoint interval b: ``start_batch`` snapshots the coordinator and starts the
writers with checkpoint id b-1; ``consume`` feeds a writer; ``checkpoint`` is the barrier
plus Spark durably recording the batch; ``checkpoint_complete`` is the ACK. Crashes are
``Crash`` raised from fault hooks; the harness then throws the crashed object away, as a
hard exit would.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from engine.config import Safety, TableConfig
from engine.storage import Storage
from engine.stream.coordinator import Coordinator
from engine.stream.recorder import ListRecorder
from engine.stream.state import CheckpointStateStore, EpochStore, WriterStateStore
from engine.stream.transport.local import LocalClient
from engine.stream.writer import WriterTask
from engine.table import Table


class Crash(BaseException):
    """Raised by a fault hook: the process 'hard-exits' at that point."""


def crash_at(point: str, *, times: int = 1, when: Callable[[dict], bool] | None = None):
    """A fault hook that crashes at ``point`` (the first ``times`` matches)."""
    left = [times]

    def hook(p: str, info: dict[str, Any]) -> None:
        if p == point and left[0] > 0 and (when is None or when(info)):
            left[0] -= 1
            raise Crash(p)

    return hook


def block_at(point: str, release: threading.Event, reached: threading.Event):
    """A fault hook that pauses at ``point`` until released (SIGSTOP-like)."""

    def hook(p: str, info: dict[str, Any]) -> None:
        if p == point and not release.is_set():
            reached.set()
            release.wait()

    return hook


def ids(batch: int, task: int, n: int) -> list[int]:
    """Deterministic source rows: a replayed batch yields the same ids."""
    return [batch * 10_000 + task * 1_000 + i for i in range(n)]


class StreamHarness:
    def __init__(
        self,
        root: str,
        *,
        parallelism: int = 2,
        mode: str = "async",
        safety: Safety | None = None,
        write_batch_rows: int = 5,
        commit_ack_timeout_s: float = 5.0,
        client_factory: Callable[[Coordinator], Any] = LocalClient,
        row_group_flushes: bool = False,
    ) -> None:
        self.root = root
        self.table = Table.create(
            os.path.join(root, "table"), TableConfig(key_field="id", file_groups=4), max_skew_ms=1
        )
        self.state = Storage(os.path.join(root, "state"))
        self.parallelism = parallelism
        self.mode = mode
        self.safety = safety or Safety()
        self.write_batch_rows = write_batch_rows
        self.commit_ack_timeout_s = commit_ack_timeout_s
        self.client_factory = client_factory
        self.row_group_flushes = row_group_flushes
        self.recorder = ListRecorder()
        self.writer_state = WriterStateStore(self.state, "writers")
        self.coordinator = self.new_coordinator()
        self.batch = -1
        self.spark_committed = -1  # last batch Spark durably recorded
        self.expected: list[int] = []  # ids of every batch Spark recorded
        self.batch_rows: dict[int, list[int]] = {}
        self.writers: dict[int, WriterTask] = {}
        self.restored = False

    # ------------------------------------------------------------------ coordinator
    def new_coordinator(self, fault_hook=None) -> Coordinator:
        kwargs = {"fault_hook": fault_hook} if fault_hook else {}
        return Coordinator(
            self.table,
            parallelism=self.parallelism,
            mode=self.mode,
            safety=self.safety,
            commit_ack_timeout_s=self.commit_ack_timeout_s,
            recorder=self.recorder,
            state_store=CheckpointStateStore(self.state, "coordinator"),
            epoch_store=EpochStore(self.table.storage),
            **kwargs,
        )

    def set_coordinator_fault(self, hook) -> None:
        self.coordinator.fault_hook = hook

    def restart_coordinator(self, *, close_old: bool = True, fault_hook=None) -> dict[str, Any]:
        """The driver died: a new coordinator restores from Spark's last committed batch;
        the batch after it runs again with restored writers."""
        if close_old:
            self.coordinator.close()
        self.coordinator = self.new_coordinator(fault_hook)
        summary = self.coordinator.restore(self.spark_committed)
        self.batch = self.spark_committed
        self.restored = True
        return summary

    job_failover = restart_coordinator

    # ------------------------------------------------------------------ writers
    def writer(self, task: int, attempt: int = 0, fault_hook=None) -> WriterTask:
        kwargs = {"fault_hook": fault_hook} if fault_hook else {}
        return WriterTask(
            task,
            attempt,
            self.batch - 1,
            self.table,
            self.client_factory(self.coordinator),
            write_batch_rows=self.write_batch_rows,
            op="insert",
            state_store=self.writer_state,
            recorder=self.recorder,
            # Well past the coordinator's own timeout, so that a loaded machine still sees
            # the coordinator's error rather than the writer giving up first.
            instant_deadline_s=self.commit_ack_timeout_s * 2 + 5,
            row_group_flushes=self.row_group_flushes,
            **kwargs,
        )

    def start_batch(self, fault_hooks: dict[int, Any] | None = None) -> int:
        self.batch += 1
        self.coordinator.snapshot(self.batch)
        self.batch_rows[self.batch] = []
        self.writers = {}
        for task in range(self.parallelism):
            w = self.writer(task, 0, (fault_hooks or {}).get(task))
            w.initialize_state(restored=self.restored)
            self.writers[task] = w
        self.restored = False
        return self.batch

    def consume(self, task: int, rows: list[int], chunk: int = 4) -> None:
        """Feed rows in small record batches, so flushes happen mid-batch."""
        for i in range(0, len(rows), chunk):
            part = rows[i : i + chunk]
            self.writers[task].write(pa.table({"id": pa.array(part, pa.int64())}))
            self.batch_rows[self.batch].extend(part)

    def subtask_fails(self, task: int, fault_hook=None) -> WriterTask:
        """Task-only failover: Spark retries the task with the next attempt number; the
        caller replays the task's rows."""
        attempt = self.writers[task].attempt + 1
        self.batch_rows[self.batch] = [
            r for r in self.batch_rows[self.batch] if (r // 1_000) % 10 != task
        ]
        w = self.writer(task, attempt, fault_hook)
        w.initialize_state(restored=False)
        self.writers[task] = w
        return w

    def checkpoint(self) -> int:
        """Barrier on every writer, then Spark durably records the batch."""
        for task in range(self.parallelism):
            self.writers[task].end_of_checkpoint()
        self.spark_committed = self.batch
        self.expected.extend(self.batch_rows[self.batch])
        return self.batch

    def checkpoint_complete(self, checkpoint_id: int) -> None:
        self.coordinator.notify_checkpoint_complete(checkpoint_id).result(timeout=10)

    def run_batch(self, rows_per_task: int = 7, ack: bool = True) -> int:
        b = self.start_batch()
        for task in range(self.parallelism):
            self.consume(task, ids(b, task, rows_per_task))
        self.checkpoint()
        if ack:
            self.checkpoint_complete(b)
        return b

    # ------------------------------------------------------------------ checks
    def visible_ids(self) -> list[int]:
        return sorted(self.table.snapshot()["id"].to_pylist())

    def assert_exactly_once(self) -> None:
        visible = self.visible_ids()
        assert len(visible) == len(set(visible)), "a row is visible twice"
        assert visible == sorted(self.expected), (
            f"lost {sorted(set(self.expected) - set(visible))[:10]}, "
            f"extra {sorted(set(visible) - set(self.expected))[:10]}"
        )

    def commit_epochs(self) -> list[int]:
        """Coordinator epoch of every completed stream instant, in completion order."""
        tl = self.table.timeline.reload()
        return [tl.read_metadata(i).extra["epoch"] for i in tl.completed()]

    def commits(self) -> list[dict[str, Any]]:
        return self.recorder.of_kind("commit")
