"""The ceiling: the same micro-batches written as plain Parquet, with no table protocol."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyspark import TaskContext

from harness.pipeline.events import SCHEMA

TASK_RESULT_SCHEMA = "task long, attempt long, rows long, files long, max_event_time double"


def task_result(
    task: int, attempt: int, rows: int, files: int, max_event_time: float
) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict(
        {
            "task": [task],
            "attempt": [attempt],
            "rows": [rows],
            "files": [files],
            "max_event_time": [max_event_time],
        }
    )


def task_attempt() -> tuple[int, int]:
    """The running Spark task's partition and attempt number (only inside a task)."""
    ctx = TaskContext.get()
    if ctx is None:
        raise RuntimeError("not inside a Spark task")
    return ctx.partitionId(), ctx.attemptNumber()


def write_raw_parquet(
    batches: Iterator[pa.RecordBatch], *, out_dir: str, batch_id: int
) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: one Parquet file per task attempt and micro-batch."""
    task, attempt = task_attempt()
    target = Path(out_dir) / f"batch={batch_id}"
    target.mkdir(parents=True, exist_ok=True)
    path = target / f"part-{task:04d}-a{attempt}.parquet"
    rows, newest = 0, 0.0
    with pq.ParquetWriter(str(path) + ".tmp", SCHEMA) as writer:
        for batch in batches:
            if batch.num_rows:
                writer.write_batch(batch)
                rows += batch.num_rows
                newest = max(newest, pc.max(batch.column("event_time")).as_py())
    os.replace(str(path) + ".tmp", path)
    yield task_result(task, attempt, rows, 1, newest)
