"""The whole-table checks on Spark give the verdicts and evidence the pyarrow path gives,
on a clean table and on one with lost, duplicated and partial batches."""

from pathlib import Path

import pyarrow as pa
import pytest

from engine.config import TableConfig
from engine.table import Table
from harness.checks import exactly_once, exactly_once_upserts, unique_keys
from harness.pipeline.events import SCHEMA, EventSpec, generate, upsert_keys
from harness.runner.spark_checks import SparkCheckJob, run_spark_checks

pytestmark = pytest.mark.spark
BATCH = 1000


def _write(table: Table, spec: EventSpec, start: int, end: int, op: str) -> None:
    rows = pa.Table.from_batches(
        [generate(spec, p, start, end, 0.0, 1.0) for p in range(spec.partitions)], SCHEMA
    )
    instant = table.start_instant()
    table.commit(instant, table.write_files(instant, rows, op=op))


def _table(path: Path, spec: EventSpec, batches: int, op: str) -> Table:
    table = Table.create(str(path), TableConfig(file_groups=4), SCHEMA)
    for b in range(batches):
        _write(table, spec, b * BATCH, (b + 1) * BATCH, op)
    return table


def _batches(n: int, uncertain: tuple[int, ...] = ()) -> list[dict]:
    return [
        {
            "batch_id": b,
            "start_offset": b * BATCH,
            "end_offset": (b + 1) * BATCH,
            "certain": b not in uncertain,
        }
        for b in range(n)
    ]


def _on_spark(tmp_path: Path, table: Table, mode: str, batches: list[dict], spec: EventSpec):
    job = SparkCheckJob(
        table_path=table.storage.root,
        as_of=table.timeline.reload().last_completion_time(),
        checks=["exactly_once", "unique_keys"],
        mode=mode,
        batches=batches,
        event_spec=spec.to_dict(),
        master="local[2]",
    )
    results = run_spark_checks(job, tmp_path / "work", tmp_path / "spark.log")
    return {r.name: r for r in results}


def test_append_checks_agree_with_pyarrow_on_a_broken_table(tmp_path: Path) -> None:
    spec = EventSpec(mode="append", seed=3, partitions=2, file_groups=4)
    table = _table(tmp_path / "t", spec, 3, "insert")
    # Broken: batch 1's rows again (duplicates), batch 3 half written though uncertain,
    # and batch 4 certain but never written (lost).
    _write(table, spec, BATCH, BATCH + 10, "insert")
    _write(table, spec, 3 * BATCH, 3 * BATCH + 500, "insert")
    batches = _batches(5, uncertain=(3,))
    ids = table.snapshot(columns=["id", "event_id"])
    want = {
        "exactly_once": exactly_once(batches, ids.column("event_id")),
        "unique_keys": unique_keys(ids.column("id")),
    }
    got = _on_spark(tmp_path, table, "append", batches, spec)
    for check, expected in want.items():
        assert got[check].verdict == expected.verdict, (check, got[check].evidence)
        assert got[check].evidence == expected.evidence, check
    assert want["exactly_once"].verdict == "invalid"
    assert want["exactly_once"].evidence["lost"]["batches"] == [4]
    assert want["exactly_once"].evidence["duplicated"]["count"] == 10
    assert want["exactly_once"].evidence["partial_batches"]["count"] == 1


def test_upsert_checks_agree_with_pyarrow(tmp_path: Path) -> None:
    spec = EventSpec(mode="upsert", seed=5, partitions=2, keys=700, file_groups=4)
    table = _table(tmp_path / "t", spec, 3, "upsert")
    rows = table.snapshot(columns=["id", "event_id"])
    key_of = lambda offsets: upsert_keys(offsets, spec)  # noqa: E731
    want = exactly_once_upserts(_batches(3), rows.column("id"), rows.column("event_id"), key_of)
    got = _on_spark(tmp_path, table, "upsert", _batches(3), spec)
    assert want.verdict == got["exactly_once"].verdict == "valid"
    assert got["exactly_once"].evidence == want.evidence
    assert got["unique_keys"].verdict == "valid"
