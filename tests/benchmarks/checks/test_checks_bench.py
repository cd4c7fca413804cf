"""Whole-table checks on a large table: pyarrow in one process, and Spark (the path
`check_engine: auto` takes for large tables). Rows: INSTANTBENCH_BENCH_ROWS (default
200,000 so that the test run stays short; docs/measurements.md's figure uses 10,000,000).

    INSTANTBENCH_BENCH_ROWS=10000000 python -m pytest tests/benchmarks/checks \
        --benchmark-enable -s
"""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest

from engine.config import TableConfig
from engine.table import Table
from harness.checks import exactly_once, unique_keys
from harness.pipeline.events import SCHEMA, EventSpec, generate
from harness.runner.spark_checks import SparkCheckJob, run_spark_checks

ROWS = int(os.environ.get("INSTANTBENCH_BENCH_ROWS", "200000"))
BATCHES = 20
SPEC = EventSpec(mode="append", seed=1, partitions=2, payload_bytes=100, file_groups=8)


@pytest.fixture(scope="module")
def big_table(tmp_path_factory) -> tuple[Table, list[dict]]:
    """ROWS appended in BATCHES commits, as a stream would have written them."""
    path = tmp_path_factory.mktemp("checks") / "table"
    table = Table.create(str(path), TableConfig(file_groups=8), SCHEMA, max_skew_ms=0)
    size, batches = ROWS // BATCHES, []
    for b in range(BATCHES):
        start, end = b * size, (b + 1) * size
        rows = pa.Table.from_batches(
            [generate(SPEC, p, start, end, 0.0, 1.0) for p in range(SPEC.partitions)], SCHEMA
        )
        instant = table.start_instant()
        table.commit(instant, table.write_files(instant, rows, op="insert"))
        batches.append({"batch_id": b, "start_offset": start, "end_offset": end, "certain": True})
    yield table, batches
    table.close()


def test_bench_checks_pyarrow(benchmark, big_table):
    table, batches = big_table

    def check():
        rows = table.snapshot(columns=["id", "event_id"])
        return exactly_once(batches, rows.column("event_id")), unique_keys(rows.column("id"))

    once, keys = benchmark.pedantic(check, rounds=1, iterations=1)
    assert once.verdict == keys.verdict == "valid"
    assert once.evidence["observed_rows"] == ROWS


@pytest.mark.spark  # a Spark job of its own: in the machine lane, never beside a timed run
def test_bench_checks_spark(benchmark, big_table, tmp_path: Path):
    table, batches = big_table
    job = SparkCheckJob(
        table_path=table.storage.root,
        as_of=table.timeline.reload().last_completion_time(),
        checks=["exactly_once", "unique_keys"],
        mode="append",
        batches=batches,
        master="local[2]",
    )
    results = benchmark.pedantic(
        lambda: run_spark_checks(job, tmp_path, tmp_path / "spark.log"), rounds=1, iterations=1
    )
    assert [r.verdict for r in results] == ["valid", "valid"]
    assert results[0].evidence["observed_rows"] == ROWS
