"""Executor side of the engine sink: one writer task per Spark task and micro-batch.

Runs inside Spark's Python workers (mapInArrow). The table handle and the RPC client are
cached per worker process, which Spark reuses across tasks.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

import pyarrow as pa

from engine.config import Safety
from engine.stream.state import WriterStateStore
from engine.stream.transport.rpc import Endpoint, RpcCoordinatorClient
from engine.stream.writer import WriterTask
from engine.table import Table
from harness.faults.crash import record_writer_retry, writer_crash_hook
from harness.faults.fired import FiredLog
from harness.faults.schedule import Occurrence
from harness.faults.storage import StorageFaults
from harness.history import HistoryWriter
from harness.pipeline.raw_sink import task_attempt, task_result
from harness.pipeline.routing import without_route
from harness.run_clock import RunClock

_TABLES: dict[str, Table] = {}
_CLIENTS: dict[Endpoint, RpcCoordinatorClient] = {}


@dataclass(frozen=True)
class TaskConfig:
    batch_id: int
    checkpoint_id: int  # the last completed checkpoint: batch_id - 1
    restored: bool  # first batch after a driver restart: re-send saved WriteMeta
    table_path: str
    state_dir: str
    history_dir: str
    endpoint: dict[str, Any]  # engine.stream.transport.rpc.Endpoint: host, port, secret
    op: str
    write_batch_rows: int
    safety: dict[str, bool]
    t0: float = 0.0
    # Faults for this batch: {task id: point} hard-exits that task's first attempt there.
    crash_points: dict[int, tuple[str, str]] = field(default_factory=dict)
    # Storage fault occurrences and the constant storage latency (harness.faults.storage).
    storage_faults: list[dict[str, Any]] = field(default_factory=list)
    storage_latency_ms: float = 0.0
    fired_dir: str = ""  # counted faults are counted across processes (harness.faults.fired)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def warm_up_worker(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """The driver's warm-up job maps this before the run's clock starts. Spark pickles it
    by reference (a function of the driver's own __main__ would travel by value), so each
    Python worker imports this module, and the engine with it: about 3 s of imports that
    a writer's first batch, or the first batch after a crash's retry, would otherwise pay."""
    yield from batches


def _table(cfg: TaskConfig, task: int, history: HistoryWriter) -> Table:
    key = f"{cfg.table_path}#{task}"  # storage faults can target one writer
    table = _TABLES.get(key)
    if table is None:
        table = Table.open(
            cfg.table_path,
            safety=Safety(**cfg.safety),
            writer_id=f"writer:{task}",
            new_keys_by_bucket=True,  # where harness.pipeline.routing sent them
        )
        occurrences = [Occurrence.from_dict(o) for o in cfg.storage_faults]
        StorageFaults(
            occurrences,
            RunClock(t0=cfg.t0),
            history,
            FiredLog(cfg.fired_dir),
            cfg.storage_latency_ms,
            target=f"writer:{task}",
        ).install(table.storage)
        _TABLES[key] = table
    return table.reload()


def _client(cfg: TaskConfig) -> RpcCoordinatorClient:
    endpoint = Endpoint(**cfg.endpoint)
    client = _CLIENTS.get(endpoint)
    if client is None:
        client = _CLIENTS[endpoint] = RpcCoordinatorClient(endpoint)
    return client


def write_with_engine(
    batches: Iterator[pa.RecordBatch], *, cfg: dict[str, Any]
) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: stream this partition of the micro-batch through a WriterTask."""
    config = TaskConfig(**cfg)
    task, attempt = task_attempt()
    history = HistoryWriter(config.history_dir, f"writer:{task}")
    fired = FiredLog(config.fired_dir)
    record_writer_retry(
        config.crash_points, task, attempt, config.batch_id, time.time() - config.t0, history, fired
    )
    table = _table(config, task, history)
    writer = WriterTask(
        task,
        attempt,
        config.checkpoint_id,
        table,
        _client(config),
        write_batch_rows=config.write_batch_rows,
        op=config.op,
        state_store=WriterStateStore(table.storage, config.state_dir),
        recorder=history,
        fault_hook=writer_crash_hook(
            config.crash_points, task, attempt, config.batch_id, history, fired
        ),
        offset_field="event_id",
        event_time_field="event_time",
        # COW inserts: a flush is a row group of the task's one file of the batch, closed
        # and reported at the barrier (engine/table/appender.py); other writes a file each.
        row_group_flushes=True,
    )
    writer.initialize_state(restored=config.restored)
    rows, newest = 0, 0.0
    for batch in batches:
        writer.write(without_route(batch))
        rows += batch.num_rows
    state = writer.end_of_checkpoint()
    newest = (state.metadata or {}).get("max_event_time") or 0.0
    yield task_result(task, attempt, rows, len(state.write_stats), newest)
