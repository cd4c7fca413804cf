"""A writer task (Hudi's StreamWriteFunction): one per Spark task per micro-batch.

During batch b its checkpoint id is b-1 (the last completed checkpoint, -1 at a fresh
start). It buffers records, flushes eagerly into the instant keyed by that checkpoint id,
reports every flush to the coordinator, and at the checkpoint barrier (end of its
partition) flushes the rest, reports ``last_batch`` and saves its WriteMeta.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from engine.stream import table_port
from engine.stream.recorder import Recorder, null_recorder
from engine.stream.state import WriterStateStore
from engine.stream.transport.base import CoordinatorClient
from engine.stream.write_meta import EMPTY_INSTANT, WriteMetaEvent

# Named points where the harness may hard-exit the writer's process.
FAULT_POINTS = ("before_flush", "mid_flush", "after_flush_before_event", "after_event")
FaultHook = Callable[[str, dict[str, Any]], None]


def _no_fault(point: str, info: dict[str, Any]) -> None:
    """Default fault hook: no fault."""


class WriterTask:
    def __init__(
        self,
        task_id: int,
        attempt: int,
        checkpoint_id: int,
        table: Any,
        client: CoordinatorClient,
        *,
        write_batch_rows: int,
        op: str = "upsert",
        state_store: WriterStateStore | None = None,
        recorder: Recorder = null_recorder,
        fault_hook: FaultHook = _no_fault,
        instant_deadline_s: float = 120.0,
        offset_field: str | None = None,
        event_time_field: str | None = None,
    ) -> None:
        self.task_id = task_id
        self.attempt = attempt
        self.checkpoint_id = checkpoint_id
        self.table = table
        self.client = client
        self.write_batch_rows = write_batch_rows
        self.op = op
        self.state_store = state_store
        self.recorder = recorder
        self.fault_hook = fault_hook
        self.instant_deadline_s = instant_deadline_s
        self.offset_field = offset_field
        self.event_time_field = event_time_field
        self.blocked_ms = 0.0  # time spent waiting for an instant (a metric)

        self._pending: list[pa.Table] = []
        self._pending_rows = 0
        self._instant: str | None = None
        self._flushes = 0
        # Everything reported for this checkpoint: the state saved at the barrier.
        self._reported: WriteMetaEvent | None = None

    # ------------------------------------------------------------------ lifecycle
    def initialize_state(self, restored: bool) -> None:
        """Hudi's initializeState. ``restored``: first batch after a driver restart, so
        re-send the WriteMeta of the batch Spark committed last (the coordinator commits
        it if still pending, ignores it if done). ``attempt > 0``: a task retry, so tell
        the coordinator to void what earlier attempts reported from this checkpoint on."""
        if restored and self.state_store is not None:
            saved = self.state_store.load(self.task_id, self.checkpoint_id - 1)
            if saved is not None and saved.instant != EMPTY_INSTANT:
                self.client.send_event(saved)
        if self.attempt > 0:
            self.client.send_event(
                WriteMetaEvent(
                    task_id=self.task_id,
                    checkpoint_id=self.checkpoint_id,
                    instant=EMPTY_INSTANT,
                    bootstrap=True,
                    attempt=self.attempt,
                )
            )

    def write(self, records: pa.RecordBatch | pa.Table) -> None:
        if records.num_rows == 0:
            return
        table = records if isinstance(records, pa.Table) else pa.Table.from_batches([records])
        self._pending.append(table)
        self._pending_rows += table.num_rows
        if self._pending_rows >= self.write_batch_rows:
            self._flush(last_batch=False)

    def end_of_checkpoint(self) -> WriteMetaEvent:
        """The checkpoint barrier: flush the rest, report the last batch, save state."""
        self._flush(last_batch=True)
        assert self._reported is not None
        state = WriteMetaEvent(
            task_id=self.task_id,
            checkpoint_id=self.checkpoint_id,
            instant=self._reported.instant,
            write_stats=self._reported.write_stats,
            last_batch=True,
            bootstrap=True,
            attempt=self.attempt,
            metadata=self._reported.metadata,
        )
        if self.state_store is not None:
            self.state_store.save(state)
        return state

    # ------------------------------------------------------------------ flushing
    def _instant_to_write(self) -> str:
        if self._instant is None:
            grant = self.client.request_instant(
                self.checkpoint_id, self.task_id, self.instant_deadline_s
            )
            self.blocked_ms += grant.latency_ms
            self.recorder(
                "instant_request",
                {
                    "checkpoint_id": self.checkpoint_id,
                    "instant": grant.instant,
                    "task": self.task_id,
                    "latency_ms": grant.latency_ms,
                    "blocked_ms": grant.blocked_ms,
                    "created": grant.created,
                },
            )
            self._instant = grant.instant
        return self._instant

    def _flush(self, last_batch: bool) -> None:
        instant = self._instant_to_write()
        info = {"task": self.task_id, "attempt": self.attempt, "instant": instant}
        stats: list[dict[str, Any]] = []
        meta: dict[str, Any] = {}
        if self._pending_rows:
            self.fault_hook("before_flush", info)
            data = pa.concat_tables(self._pending)
            token = f"t{self.task_id}-a{self.attempt}-f{self._flushes}"
            prior = list(self._reported.write_stats) if self._reported else []
            stats = table_port.write_files(self.table, instant, data, self.op, token, prior)
            # The table writes a flush in one call, so "mid" is the closest point where
            # files exist on storage but nobody knows them yet.
            self.fault_hook("mid_flush", info)
            meta = self._flush_metadata(data, stats)
            self._flushes += 1
            self._pending, self._pending_rows = [], 0
            self.fault_hook("after_flush_before_event", info)
        event = WriteMetaEvent(
            task_id=self.task_id,
            checkpoint_id=self.checkpoint_id,
            instant=instant,
            write_stats=tuple(stats),
            last_batch=last_batch,
            attempt=self.attempt,
            metadata=meta,
        )
        self.client.send_event(event)
        self._reported = event if self._reported is None else self._reported.merge_with(event)
        self.fault_hook("after_event", info)
        self.recorder(
            "flush",
            {
                "task": self.task_id,
                "attempt": self.attempt,
                "checkpoint_id": self.checkpoint_id,
                "instant": instant,
                "rows": meta.get("rows", 0),
                "bytes": meta.get("bytes", 0),
                "files": len(stats),
                "last_batch": last_batch,
            },
        )

    def _flush_metadata(self, data: pa.Table, stats: list[dict[str, Any]]) -> dict[str, Any]:
        written = sum(s.get("file_size", 0) for s in stats)
        meta: dict[str, Any] = {"rows": data.num_rows, "bytes": written, "flushes": 1}
        if self.offset_field is not None:
            mm = pc.min_max(data[self.offset_field])
            meta["min_offset"] = mm["min"].as_py()
            meta["max_offset"] = mm["max"].as_py()
        if self.event_time_field is not None:
            meta["max_event_time"] = _seconds(pc.max(data[self.event_time_field]).as_py())
        return meta


def _seconds(value: Any) -> float | None:
    """Event time as epoch seconds, whether the column holds numbers or timestamps."""
    if value is None or isinstance(value, int | float):
        return value
    return value.timestamp()
