"""Read a Hudi table with Hudi's own Spark reader and leave Parquet a judge reads without Spark.

Run by the Hudi runtime's python (pyspark 3.5): imports only pyspark and the standard
library, takes one JSON config file:

    python reader.py CONFIG.json

Config: jars, master (default local[2]) and `tables`, each with table_path, out_dir and
optionally `as_of` (instant times for `as.of.instant` time travel), `incremental`
([begin, end] pairs of completion times; Hudi 1.x's incremental query selects by
completion time) and `columns`: one JVM reads every table asked of it.
Each read is written by Spark's own Parquet writer to out_dir/<kind>/<name>/ (one file),
with the columns asked for, by default id, event_id, _hoodie_commit_time and, when the
table has them, account, amount.
out_dir/manifest.json lists every read of that table: kind, name, options, rows, seconds,
or the error (one failed read does not hide the others: the judge marks what is missing
`unknown`). The reads run one after another: Hudi 1.2.0's reader is not safe for
concurrent queries of one session (three at once here: its Parquet tasks failed with
`ClassCastException: ColumnarBatchRow cannot be cast to ColumnarBatch`), unlike the
formats' (harness/systems/spark_stream/reader.py).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from pyspark.sql import DataFrame, SparkSession

try:  # imported as a module of the project (its tests)
    from harness.systems.hudi.script_io import java_error, script_main
    from harness.systems.hudi.spark_session import build_session
except ImportError:  # run as a script by the Hudi runtime's python: the modules are beside it
    from script_io import java_error, script_main  # type: ignore[no-redef]
    from spark_session import build_session  # type: ignore[no-redef]

KEY_COLUMNS = ["id", "event_id", "_hoodie_commit_time"]
OPTIONAL_COLUMNS = ["account", "amount"]


def project(frame: DataFrame, columns: list[str] | None = None) -> DataFrame:
    if columns is not None:
        return frame.select(*columns)
    present = set(frame.columns)
    return frame.select(*KEY_COLUMNS, *[c for c in OPTIONAL_COLUMNS if c in present])


def plan(cfg: dict[str, Any]) -> list[tuple[str, str, dict[str, str]]]:
    """(kind, name, Hudi read options) of every read asked for, the snapshot first."""
    reads: list[tuple[str, str, dict[str, str]]] = [("snapshot", "latest", {})]
    for instant in cfg.get("as_of", []):
        reads.append(("as_of", str(instant), {"as.of.instant": str(instant)}))
    for begin, end in cfg.get("incremental", []):
        options = {
            "hoodie.datasource.query.type": "incremental",
            "hoodie.datasource.read.begin.instanttime": str(begin),
            "hoodie.datasource.read.end.instanttime": str(end),
        }
        reads.append(("incremental", f"{begin}_{end}", options))
    return reads


def run_read(
    spark: SparkSession, cfg: dict[str, Any], read: tuple[str, str, dict[str, str]]
) -> dict[str, Any]:
    kind, name, options = read
    out = os.path.join(cfg["out_dir"], kind, name)
    entry: dict[str, Any] = {"kind": kind, "name": name, "options": options, "path": out}
    t0 = time.monotonic()
    try:
        frame = spark.read.format("hudi").options(**options).load(cfg["table_path"])
        frame = project(frame, cfg.get("columns"))
        # One file per read: the judge loads a folder, and a few thousand rows need no more.
        frame.coalesce(1).write.mode("overwrite").parquet(out)
        entry["rows"] = spark.read.parquet(out).count()
    except Exception as exc:  # recorded, not raised: the other reads still count
        entry["error"] = java_error(exc)
    entry["seconds"] = round(time.monotonic() - t0, 3)
    return entry


def read_all(spark: SparkSession, table: dict[str, Any]) -> bool:
    """Every read asked of one table, then its manifest; True if none failed."""
    os.makedirs(table["out_dir"], exist_ok=True)
    entries = [run_read(spark, table, read) for read in plan(table)]
    manifest = os.path.join(table["out_dir"], "manifest.json")
    with open(manifest + ".tmp", "w", encoding="utf-8") as handle:
        json.dump({"reads": entries}, handle, indent=1)
    os.replace(manifest + ".tmp", manifest)  # present only once every read is recorded
    return all("error" not in e for e in entries)


def run(cfg: dict[str, Any]) -> int:
    spark = build_session(cfg, "hudi-reader", "local[2]", {"spark.sql.shuffle.partitions": "2"})
    clean = [read_all(spark, table) for table in cfg["tables"]]
    spark.stop()
    return 0 if all(clean) else 1


if __name__ == "__main__":
    sys.exit(script_main(sys.argv, run))
