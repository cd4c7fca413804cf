"""A writer task (Hudi's StreamWriteFunction): one per Spark task per micro-batch.

During batch b its checkpoint id is b-1 (the last completed checkpoint, -1 at a fresh
start). It buffers records, flushes eagerly into the instant keyed by that checkpoint id,
reports every flush to the coordinator, and at the checkpoint barrier (end of its
partition) flushes the rest, reports ``last_batch`` and saves its WriteMeta.

``row_group_flushes`` (COW inserts; other writes ignore it): a flush appends a row group
to the task's one open file of the instant instead of writing a file, and only the
barrier closes the file and reports it, in the one event of the checkpoint (Hudi's Flink
append mode, engine/table/appender.py): no file, marker or event per flush. The fault
points still come at every flush; between flushes the file is unfinished and unreported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from engine.layout.file_names import write_token
from engine.stream import table_port
from engine.stream.recorder import Recorder, null_recorder
from engine.stream.state import WriterStateStore
from engine.stream.transport.base import CoordinatorClient
from engine.stream.write_meta import EMPTY_INSTANT, WriteMetaEvent, merge_metadata
from engine.table import Table
from engine.table.appender import BaseAppender

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
        table: Table,
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
        row_group_flushes: bool = False,
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
        self.row_groups = row_group_flushes and op == "insert" and table.config.table_type == "cow"
        self._appender: BaseAppender | None = None
        self._unreported: dict[str, Any] = {}  # row-group mode: flushes' metadata so far

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
        flushed: dict[str, Any] = {}
        if self._pending_rows:
            self.fault_hook("before_flush", info)
            data = pa.concat_tables(self._pending)
            # Hudi's token: the task as the partition, each flush a stage, the attempt as is.
            token = write_token(self.task_id, self._flushes, self.attempt)
            if self.row_groups:
                written = self._append_row_group(instant, data, token)
                if last_batch:  # the barrier's flush ends with the file whole on storage
                    stats = self._close_file()
            else:
                prior = list(self._reported.write_stats) if self._reported else []
                stats = table_port.write_files(self.table, instant, data, self.op, token, prior)
                written = sum(s.get("file_size", 0) for s in stats)
            # The table writes a flush in one call, so "mid" is the closest point where
            # files exist on storage but nobody knows them yet (row-group mode before the
            # barrier: the file is still unfinished).
            self.fault_hook("mid_flush", info)
            flushed = self._flush_metadata(data, written)
            self._flushes += 1
            self._pending, self._pending_rows = [], 0
            self.fault_hook("after_flush_before_event", info)
        elif self.row_groups and last_batch:
            stats = self._close_file()
        meta = flushed
        if self.row_groups:
            self._unreported = merge_metadata(self._unreported, flushed)
            if not last_batch:  # the open file is not reportable yet: no event
                self.fault_hook("after_event", info)
                self._record_flush(instant, flushed, 0, last_batch)
                return
            meta, self._unreported = self._unreported, {}
            if stats:
                meta["bytes"] = sum(s["file_size"] for s in stats)
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
        self._record_flush(instant, flushed, len(stats), last_batch)

    def _append_row_group(self, instant: str, data: pa.Table, token: str) -> int:
        """Row-group mode: `data` as one more row group of the open file (opened by the
        instant's first flush); returns the bytes it added."""
        if self._appender is None:
            self._appender = table_port.open_appender(self.table, instant, token)
        before = self._appender.bytes_written
        try:
            self._appender.write(data)
        except Exception:
            self._appender.abort()  # this attempt fails: its retry starts a new file
            raise
        return self._appender.bytes_written - before

    def _close_file(self) -> list[dict[str, Any]]:
        """Row-group mode at the barrier: close and publish the file; its write stat."""
        appender, self._appender = self._appender, None
        stat = appender.close() if appender is not None else None
        return [] if stat is None else [stat.to_dict()]

    def _record_flush(
        self, instant: str, meta: dict[str, Any], files: int, last_batch: bool
    ) -> None:
        self.recorder(
            "flush",
            {
                "task": self.task_id,
                "attempt": self.attempt,
                "checkpoint_id": self.checkpoint_id,
                "instant": instant,
                "rows": meta.get("rows", 0),
                "bytes": meta.get("bytes", 0),
                "files": files,
                "last_batch": last_batch,
            },
        )

    def _flush_metadata(self, data: pa.Table, written: int) -> dict[str, Any]:
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
