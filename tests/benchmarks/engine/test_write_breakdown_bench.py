"""Where an engine micro-batch's time goes, against plain Parquet of the same rows (issue 12,
item 5: the engine sink at >= 90% of `engine.sink: raw_parquet`). No Spark: one writer
task as a Spark task runs it (WriterTask over RPC to an in-process coordinator, the
append stream's rows in Spark's 10,000-row Arrow batches, COW insert, 8 bucket file
groups, TrueTime bound 0 as in scenarios/ceiling.yaml, flushes as row groups of one file
per task and batch as the pipeline's writer tasks write them), and the raw sink's body
(one ParquetWriter per task and batch) on the same batches, alternating round by round.

Per payload size (64 B, 256 B, 1 KB) and flush threshold (a tenth, half, the whole task
batch) it prints the writer's ms per batch, the raw ms, their ratio (raw / engine: the
engine's share of the ceiling's throughput; of the means, and the median of the rounds'
own ratios, which a burst of load during one round does not move), the commit (ACK to
completed, off the writers' path in async mode), and the writer's time by step:
validation, precombine, meta columns, Parquet encoding (streamed into storage's temp file,
so it includes writing the bytes), storage write (temp file, rename, size check; with row
groups the file's close: footer, rename out of the marker directory, size check),
markers, flush metadata, events and instant requests (RPC), state save, and the rest
(buffering, concatenation, caching).

    python -m pytest tests/benchmarks/engine/test_write_breakdown_bench.py --benchmark-enable -s

With --benchmark-timer=time.process_time every figure is CPU time instead of wall time
(the steps the writer thread's), steadier on a loaded machine.

INSTANTBENCH_BENCH_BATCH_ROWS sets the rows per task batch (default 50,000; the ceiling
scenario's tasks get 200,000), INSTANTBENCH_BENCH_ROUNDS the measured batches per case
(default 6), INSTANTBENCH_BENCH_ROW_GROUP_FLUSHES=0 a file per flush (the writer task's
default, WriterTask(row_group_flushes=False)) instead of a row group.
"""

from __future__ import annotations

import os
import statistics
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import engine.storage
import engine.table.appender
import engine.table.data_files
import engine.table.writer
from engine.config import TableConfig
from engine.stream.coordinator import Coordinator
from engine.stream.state import WriterStateStore
from engine.stream.transport.rpc import Endpoint, RpcCoordinatorClient
from engine.stream.transport.server import CoordinatorServer
from engine.stream.writer import WriterTask
from engine.table import Table
from engine.table.appender import BaseAppender
from engine.table.markers import Markers
from harness.pipeline.events import SCHEMA, EventSpec, generate

ROWS = int(os.environ.get("INSTANTBENCH_BENCH_BATCH_ROWS", "50000"))
ARROW_BATCH = 10_000  # spark.sql.execution.arrow.maxRecordsPerBatch
ROUNDS = int(os.environ.get("INSTANTBENCH_BENCH_ROUNDS", "6"))
PAYLOADS = [64, 256, 1024]
# As the pipeline's writer tasks flush (harness/pipeline/engine_task.py); 0: a file per flush.
ROW_GROUP_FLUSHES = os.environ.get("INSTANTBENCH_BENCH_ROW_GROUP_FLUSHES", "1") == "1"
FLUSH_FRACTIONS = [0.1, 0.5, 1.0]

# (owner, attribute, step): the functions timed inside the writer's path. Where the engine
# has moved a function, both places are listed; a step none of whose names exists is
# reported as absent (its time stays in "rest"). A step called inside another (the encoder
# streaming into storage's temp file) is taken out of the outer step's time.
STEPS: list[tuple[Any, str, str]] = [
    (engine.table.writer, "conform", "validate"),
    (engine.table.writer, "precombine", "precombine"),
    (engine.table.writer, "add_meta", "meta columns"),
    (engine.table.writer, "parquet_bytes", "parquet encode"),
    (engine.table.data_files, "write_parquet", "parquet encode"),
    (engine.storage.Storage, "write_verified", "storage write"),
    (Markers, "create", "markers"),
    (WriterTask, "_flush_metadata", "flush metadata"),
    (RpcCoordinatorClient, "send_event", "events (RPC)"),
    (RpcCoordinatorClient, "request_instant", "instant (RPC)"),
    (WriterStateStore, "save", "state save"),
    # Row-group mode (engine/table/appender.py): a flush's row group is the appender's
    # write less its nested steps (mostly the encoding); its close is the footer, the
    # rename out of the marker directory and the size check.
    (engine.table.appender, "conform", "validate"),
    (engine.table.appender, "precombine", "precombine"),
    (engine.table.appender, "add_meta", "meta columns"),
    (BaseAppender, "write", "parquet encode"),
    (BaseAppender, "close", "storage write"),
]


class Steps:
    """Seconds per step, summed over calls (thread-safe); a step's time excludes the steps
    called inside it, so the steps add up."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self.clock = clock
        self.seconds: dict[str, float] = defaultdict(float)
        self._lock = threading.Lock()
        self._local = threading.local()  # per thread: the inner steps' seconds, per level

    def wrap(self, fn: Callable[..., Any], step: str) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            stack = self._local.__dict__.setdefault("stack", [])
            stack.append(0.0)
            t0 = self.clock()
            try:
                return fn(*args, **kwargs)
            finally:
                elapsed = self.clock() - t0
                inner = stack.pop()
                if stack:
                    stack[-1] += elapsed
                with self._lock:
                    self.seconds[step] += elapsed - inner

        return timed


def task_batches(payload: int, batch: int) -> list[pa.RecordBatch]:
    """One task's rows of one micro-batch, as Spark hands them to mapInArrow."""
    spec = EventSpec(mode="append", seed=3, partitions=1, payload_bytes=payload)
    start = batch * ROWS
    rows = generate(spec, 0, start, start + ROWS, 0.0, 1.0)
    return [rows.slice(i, ARROW_BATCH) for i in range(0, ROWS, ARROW_BATCH)]


def write_raw(batches: list[pa.RecordBatch], path: Path) -> None:
    """harness/pipeline/raw_sink.py's body: one Parquet file per task and batch."""
    with pq.ParquetWriter(str(path) + ".tmp", SCHEMA) as writer:
        for b in batches:
            writer.write_batch(b)
    os.replace(str(path) + ".tmp", path)


class EngineTask:
    """The engine sink for one task: a writer table and client as an executor has them,
    the coordinator (its own table handle) behind its RPC server as the driver has it."""

    def __init__(self, root: Path, flush_rows: int) -> None:
        path = str(root / "table")
        Table.create(path, TableConfig(file_groups=8), max_skew_ms=0).close()
        self.coord_table = Table.open(path, max_skew_ms=0, writer_id="coordinator")
        self.table = Table.open(path, max_skew_ms=0, writer_id="writer:0")
        self.coordinator = Coordinator(self.coord_table, parallelism=1, mode="async")
        self.server = CoordinatorServer(self.coordinator, secret=Endpoint.new_secret())
        self.client = RpcCoordinatorClient(self.server.start())
        self.state = WriterStateStore(self.table.storage, ".hoodie/.stream/writers")
        self.flush_rows = flush_rows
        self.row_group_flushes = ROW_GROUP_FLUSHES
        self.batch = 0

    def write(self, batches: list[pa.RecordBatch]) -> None:
        """Batch b writes the instant of checkpoint b - 1, as in the pipeline."""
        self.coordinator.snapshot(self.batch)
        writer = WriterTask(
            0,
            0,
            self.batch - 1,
            self.table,
            self.client,
            write_batch_rows=self.flush_rows,
            op="insert",
            state_store=self.state,
            offset_field="event_id",
            event_time_field="event_time",
            row_group_flushes=self.row_group_flushes,
        )
        writer.initialize_state(restored=False)
        for b in batches:
            writer.write(b)
        writer.end_of_checkpoint()

    def commit(self) -> None:
        """ACK this batch, then make the next batch's instant before its writers start, as
        the driver does (harness/pipeline/engine_sink.py)."""
        self.coordinator.notify_checkpoint_complete(self.batch).result(timeout=60)
        self.batch += 1
        self.coordinator.request_instant(self.batch - 1, -1, 60.0)

    def close(self) -> None:
        self.client.close()
        self.server.close()
        self.coordinator.close()
        self.table.close()
        self.coord_table.close()


def _rounds(payload: int) -> Iterator[list[pa.RecordBatch]]:
    for n in range(ROUNDS + 1):  # the first round warms up (imports, caches, connections)
        yield task_batches(payload, n)


@pytest.mark.parametrize("fraction", FLUSH_FRACTIONS)
@pytest.mark.parametrize("payload", PAYLOADS)
def test_bench_engine_batch_against_raw_parquet(
    benchmark, tmp_path, monkeypatch, payload, fraction
):
    # Everything on the benchmark's own clock: --benchmark-timer=time.process_time gives
    # CPU times (the process's for the engine and raw columns, the writer thread's for the
    # steps), steadier than wall time on a loaded machine.
    clock = benchmark._timer
    steps = Steps(time.thread_time if clock is time.process_time else clock)
    wrapped = set()
    for owner, name, step in STEPS:
        fn = getattr(owner, name, None)
        if fn is not None:
            monkeypatch.setattr(owner, name, steps.wrap(fn, step))
            wrapped.add(step)
    absent = sorted({step for _, _, step in STEPS} - wrapped)
    task = EngineTask(tmp_path, max(1, int(ROWS * fraction)))
    raw_dir = tmp_path / "raw"
    raw_dir.mkdir()
    rounds = _rounds(payload)
    raw_s: list[float] = []
    commit_s: list[float] = []
    current: dict[str, list[pa.RecordBatch]] = {}

    def setup() -> None:
        # Untimed by the benchmark: the next batch's rows, the previous batch's commit
        # (async: it overlaps the next batch in the pipeline) and the raw sink's write.
        if task.batch or current:
            t0 = clock()
            task.commit()
            commit_s.append(clock() - t0)
        current["rows"] = next(rounds)
        t0 = clock()
        write_raw(current["rows"], raw_dir / f"part-{task.batch}.parquet")
        raw_s.append(clock() - t0)

    def warm_up_then_reset() -> None:
        setup()
        task.write(current["rows"])
        steps.seconds.clear()
        raw_s.clear()

    warm_up_then_reset()
    benchmark.pedantic(lambda: task.write(current["rows"]), setup=setup, rounds=ROUNDS)
    task.commit()
    commit_s = commit_s[1:]  # the warm-up batch's
    # What a benchmark can assert without timing: every row of every batch got written
    # (the warm-up's and one per round; a single round when benchmarks are disabled, as in
    # the test run CI makes).
    assert task.table.reload().stored_rows() == ROWS * (1 + len(raw_s))
    task.close()
    if benchmark.disabled:
        return

    # Means, so that the steps (summed over the rounds) add up to the engine's time.
    engine_ms = benchmark.stats.stats.mean * 1000
    raw_ms = statistics.mean(raw_s) * 1000
    per_batch = {k: v * 1000 / ROUNDS for k, v in steps.seconds.items()}
    rest = engine_ms - sum(per_batch.values())
    # Round i's raw write ran in the setup right before the engine's round i.
    round_ratio = statistics.median(
        r / e for r, e in zip(raw_s, benchmark.stats.stats.data, strict=True)
    )
    info = benchmark.extra_info
    info.update(
        rows_per_batch=ROWS,
        payload_bytes=payload,
        flush_rows=task.flush_rows,
        engine_ms=round(engine_ms, 1),
        raw_ms=round(raw_ms, 1),
        ratio=round(raw_ms / engine_ms, 3),
        round_ratio=round(round_ratio, 3),
        commit_ms=round(statistics.median(commit_s) * 1000, 1),
        steps_ms={k: round(v, 1) for k, v in sorted(per_batch.items(), key=lambda kv: -kv[1])},
        rest_ms=round(rest, 1),
        absent_steps=absent,
    )
    steps_text = ", ".join(f"{k} {v:.0f}" for k, v in info["steps_ms"].items())
    print(
        f"\npayload {payload} B, flush {fraction:g} of {ROWS} rows: engine {engine_ms:.0f} ms, "
        f"raw {raw_ms:.0f} ms, ratio {raw_ms / engine_ms:.2f} (rounds' median {round_ratio:.2f}), "
        f"commit {info['commit_ms']:.0f} ms"
        f"\n  steps (ms per batch): {steps_text}, rest {rest:.0f}"
        + (f"\n  absent: {absent}" if absent else "")
    )
