"""The whole-table checks (exactly_once, unique_keys) on Spark, for tables too large to read
into the runner: executors read the snapshot's file groups with the engine's own reader,
Spark SQL reduces the rows to what the checkers judge (ids per batch, duplicates,
phantoms), and the same judging code as the pyarrow path gives the verdict.

Runs as a child process, `python -m harness.runner.spark_checks JOB.json OUT.json`, so
that Spark's JVM and its log stay out of the runner (the log goes to the run's logs/).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pyarrow as pa

from harness.checks import CheckResult
from harness.checks.exactly_once import IdSummary, batch_bounds, judge
from harness.checks.exactly_once_upserts import exactly_once_upserts
from harness.checks.result import MAX_LISTED
from harness.checks.unique_keys import unique_keys_result

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, Row, SparkSession

# The stream's rows (batch writers' and opening rows carry event id -1, no event), and the
# rows without an event id: a bug the checker counts, which `event_id >= 0` alone would drop.
STREAM_ROWS = "event_id >= 0 OR event_id IS NULL"
# auto: Spark above this many stored rows (about 1 GB of check columns in the runner).
SPARK_ABOVE_ROWS = 20_000_000
CHECK_TIMEOUT_S = 1800


class SparkCheckError(RuntimeError):
    """The Spark checks child failed; its log has the details."""


@dataclass(frozen=True)
class SparkCheckJob:
    table_path: str
    as_of: str | None  # the snapshot every executor reads (the table is at rest by now)
    checks: list[str]  # of exactly_once, unique_keys
    mode: str  # append | upsert | bank
    batches: list[dict[str, Any]]  # expected_batches(...)
    event_spec: dict[str, Any] = field(default_factory=dict)  # upsert: keys of offsets
    master: str = "local[2]"

    @property
    def id_column(self) -> str:
        # Bank legs have their own ids; appends and upserts carry the event id.
        return "id" if self.mode == "bank" else "event_id"


def run_spark_checks(job: SparkCheckJob, work_dir: Path, log_path: Path) -> list[CheckResult]:
    """Run `job` in a child process; its results, in the order of job.checks."""
    work_dir.mkdir(parents=True, exist_ok=True)
    job_file, out_file = work_dir / "spark-checks.json", work_dir / "spark-checks-out.json"
    job_file.write_text(json.dumps(asdict(job)))
    with open(log_path, "ab") as log:
        code = subprocess.run(
            [sys.executable, "-m", "harness.runner.spark_checks", str(job_file), str(out_file)],
            stdout=log,
            stderr=subprocess.STDOUT,
            timeout=CHECK_TIMEOUT_S,
        ).returncode
    if code != 0 or not out_file.exists():
        raise SparkCheckError(f"the Spark checks exited with {code}; see {log_path}")
    out = json.loads(out_file.read_text())
    return [CheckResult(r["name"], r["verdict"], r["evidence"]) for r in out]


# ---------------------------------------------------------------- inside the child
def _read_groups(
    table_path: str, as_of: str | None, columns: list[str]
) -> Callable[[Iterable[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """mapInArrow body: each executor opens the table and reads its file groups."""

    def read(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from engine.table import Table

        table = Table.open(table_path, writer_id="checker")
        try:
            for batch in batches:
                for fid in batch.column(0).to_pylist():
                    if as_of:
                        rows = table.as_of(as_of, columns=columns, file_ids=[fid])
                    else:
                        rows = table.snapshot(columns=columns, file_ids=[fid])
                    yield from rows.to_batches()
        finally:
            table.close()

    return read


def _snapshot_frame(spark: SparkSession, job: SparkCheckJob, columns: list[str]) -> DataFrame:
    from engine.table import Table

    table = Table.open(job.table_path, writer_id="checker")
    file_ids = table.file_ids(job.as_of)
    schema = table.schema
    table.close()
    if schema is None:
        raise RuntimeError(f"{job.table_path}: no schema (nothing committed)")
    groups = spark.createDataFrame([(f,) for f in file_ids], "file_id string")
    groups = groups.repartition(max(1, min(len(file_ids), spark.sparkContext.defaultParallelism)))
    from pyspark.sql.pandas.types import from_arrow_schema

    spark_schema = from_arrow_schema(pa.schema([schema.field(c) for c in columns]))
    return groups.mapInArrow(_read_groups(job.table_path, job.as_of, columns), spark_schema)


def _unique_keys(frame: DataFrame) -> CheckResult:
    from pyspark.sql import functions as F

    # Global aggregates: first() is their one row, never None (cast: for the type only).
    totals = cast(
        "Row", frame.agg(F.count("*").alias("rows"), F.count_if(F.col("id").isNull())).first()
    )
    dups = frame.where(F.col("id").isNotNull()).groupBy("id").count().where("count > 1")
    dup_stats = cast("Row", dups.agg(F.count("*"), F.sum(F.col("count") - 1)).first())
    listed = dups.orderBy("id").limit(MAX_LISTED).collect() if dup_stats[0] else []
    return unique_keys_result(
        rows=int(totals[0]),
        null_keys=int(totals[1]),
        duplicated_keys=int(dup_stats[0] or 0),
        extra_rows=int(dup_stats[1] or 0),
        listed=[{"key": r["id"], "count": int(r["count"])} for r in listed],
    )


def _owner(
    starts: np.ndarray, ends: np.ndarray
) -> Callable[[Iterable[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """mapInArrow body: the batch each distinct id falls in (-1: none), by binary search."""

    def assign(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            ids = batch.column(0).to_numpy(zero_copy_only=False)
            owner = np.searchsorted(starts, ids, side="right") - 1
            inside = (owner >= 0) & (ids < ends[np.maximum(owner, 0)])
            yield pa.RecordBatch.from_arrays(
                [batch.column(0), batch.column(1), pa.array(np.where(inside, owner, -1))],
                names=["id", "count", "owner"],
            )

    return assign


def _exactly_once(
    spark: SparkSession, frame: DataFrame, job: SparkCheckJob, null_event_ids: int | None = None
) -> CheckResult:
    from pyspark.sql import functions as F

    bounds = batch_bounds(job.batches)
    if isinstance(bounds, CheckResult):
        return bounds
    batches, starts, ends = bounds
    ids = frame.select(F.col(job.id_column).alias("id"))
    null_ids = ids.where(F.col("id").isNull()).count()
    counts = ids.where(F.col("id").isNotNull()).groupBy("id").count()
    owned = counts.mapInArrow(_owner(starts, ends), "id long, count long, owner long").persist()
    # One pass: per batch (owner -1: no batch, the phantoms) distinct ids, rows, duplicates.
    per_owner = {
        r["owner"]: r
        for r in owned.groupBy("owner")
        .agg(
            F.count("*").alias("distinct"),
            F.sum("count").alias("rows"),
            F.count_if(F.col("count") > 1).alias("dups"),
            F.sum(F.when(F.col("count") > 1, F.col("count") - 1).otherwise(0)).alias("extra"),
        )
        .collect()
    }
    groups = per_owner.values()
    duplicated = sum(r["dups"] for r in groups)
    phantom = per_owner[-1]["distinct"] if -1 in per_owner else 0

    def listed(condition: str) -> list[Any]:
        return owned.where(condition).orderBy("id").limit(MAX_LISTED).collect()

    def missing_ids(i: int) -> list[int]:
        present = owned.where(F.col("owner") == i).select("id")
        gone = spark.range(int(starts[i]), int(ends[i])).subtract(present)
        return [r["id"] for r in gone.orderBy("id").limit(MAX_LISTED).collect()]

    summary = IdSummary(
        observed_rows=sum(r["rows"] for r in groups) + null_ids,
        distinct_ids=sum(r["distinct"] for r in groups),
        null_ids=int(null_ids),
        visible=np.array(
            [per_owner[i]["distinct"] if i in per_owner else 0 for i in range(len(batches))],
            np.int64,
        ),
        duplicated=duplicated,
        extra_rows=sum(r["extra"] for r in groups),
        duplicated_listed=[{"id": r["id"], "count": int(r["count"])} for r in listed("count > 1")]
        if duplicated
        else [],
        phantom=phantom,
        phantom_listed=[r["id"] for r in listed("owner < 0")] if phantom else [],
        missing_ids=missing_ids,
        null_event_ids=null_event_ids,
    )
    result = judge(batches, summary)
    owned.unpersist()
    return result


def _exactly_once_upserts(frame: DataFrame, job: SparkCheckJob) -> CheckResult:
    """Upsert tables hold one row per key: Spark reads them, the keys and event ids come
    back to the judge (the key space, not the event count, bounds their size)."""
    from harness.pipeline.events import EventSpec, upsert_keys

    spec = EventSpec(**job.event_spec)
    rows = frame.where(STREAM_ROWS).select("id", "event_id").toArrow()
    return exactly_once_upserts(
        job.batches,
        rows.column("id"),
        rows.column("event_id"),
        lambda offsets: upsert_keys(offsets, spec),
    )


def _exactly_once_on_spark(
    spark: SparkSession, frame: DataFrame, job: SparkCheckJob
) -> CheckResult:
    if job.mode == "upsert":
        return _exactly_once_upserts(frame, job)
    stream = frame.where(STREAM_ROWS)
    # Bank legs are judged by their own ids: their null event ids are counted apart.
    null_events = stream.where("event_id IS NULL").count() if job.mode == "bank" else None
    return _exactly_once(spark, stream, job, null_events)


# The Spark path of each check that needs the whole table (check_inputs.CHECKS).
ON_SPARK: dict[str, Callable[[SparkSession, DataFrame, SparkCheckJob], CheckResult]] = {
    "exactly_once": _exactly_once_on_spark,
    "unique_keys": lambda spark, frame, job: _unique_keys(frame),
}


def check(job: SparkCheckJob) -> list[CheckResult]:
    from harness.pipeline.session import build_session, stop_session

    spark = build_session("instantbench-checks", job.master, ends_with_stop=True)
    try:
        frame = _snapshot_frame(spark, job, ["id", "event_id"]).persist()
        return [ON_SPARK[name](spark, frame, job) for name in job.checks]
    finally:
        stop_session(spark)


def main() -> None:
    job_file, out_file = Path(sys.argv[1]), Path(sys.argv[2])
    job = SparkCheckJob(**json.loads(job_file.read_text()))
    results = check(job)
    out_file.write_text(
        json.dumps(
            [{"name": r.name, "verdict": r.verdict, "evidence": r.evidence} for r in results],
            default=str,
        )
    )


if __name__ == "__main__":
    main()
