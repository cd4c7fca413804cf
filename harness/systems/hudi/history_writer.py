"""Write tables' histories with Apache Hudi's own Spark writer, then read each back with
Hudi's reader: tables Hudi wrote, for the engine to open and read the same (issue 35 item 5).

Run by the Hudi runtime's python (pyspark 3.5): imports only pyspark and the standard
library, takes one JSON config file:

    python history_writer.py CONFIG.json

Config: jars, master (default local[2]), out (a JSON file) and `tables`, each with `path`,
`options` (Hudi write options: type, key, ordering, compaction, cleaning, archival) and
`steps`, each an `operation` (upsert, delete) over rows `[id, v, ts]` of long columns;
a step with `fail: ID` has its write task die at that id (the write must fail).
`out` gets, per table path, Hudi's snapshot rows ([id, v, ts], sorted) or the error.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.functions import udf
from pyspark.sql.types import LongType

try:  # imported as a module of the project (its tests)
    from harness.systems.hudi.script_io import java_error, script_main
    from harness.systems.hudi.spark_session import build_session
except ImportError:  # run as a script by the Hudi runtime's python: the modules are beside it
    from script_io import java_error, script_main  # type: ignore[no-redef]
    from spark_session import build_session  # type: ignore[no-redef]

ROW_SCHEMA = "id long, v long, ts long"


def write_history(spark: SparkSession, table: dict[str, Any]) -> None:
    for step in table["steps"]:
        frame = spark.createDataFrame([tuple(r) for r in step["rows"]], ROW_SCHEMA)
        if step.get("fail"):
            frame = frame.withColumn("v", fail_on(step["fail"])("id", "v"))
        writer = frame.write.format("hudi").options(**table["options"])
        writer.option("hoodie.datasource.write.operation", step["operation"])
        try:
            writer.mode("append").save(table["path"])
        except Exception:
            if not step.get("fail"):
                raise
        else:
            if step.get("fail"):
                raise RuntimeError(f"the write meant to fail on id {step['fail']} committed")


def fail_on(bad_id: int) -> Any:
    """A column function whose task dies at one id: Hudi's write job fails after its instant
    started, leaving it inflight for the next write to roll back (Hudi's eager cleaning)."""

    def value(key: int, v: int) -> int:
        if key == bad_id:
            raise RuntimeError(f"instantbench: a write task killed at id {key}")
        return v

    return udf(value, LongType())


def snapshot(spark: SparkSession, path: str) -> list[list[int]]:
    rows = spark.read.format("hudi").load(path).select("id", "v", "ts").collect()
    return sorted([r.id, r.v, r.ts] for r in rows)


def run(cfg: dict[str, Any]) -> int:
    spark = build_session(cfg, "instantbench-hudi-history", "local[2]", {})
    answers: dict[str, Any] = {}
    for table in cfg["tables"]:
        try:
            write_history(spark, table)
            answers[table["path"]] = {"snapshot": snapshot(spark, table["path"])}
        except Exception as exc:  # recorded: one table failing leaves the others compared
            answers[table["path"]] = {"error": java_error(exc)}
    with open(cfg["out"], "w", encoding="utf-8") as handle:
        json.dump(answers, handle)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(script_main(sys.argv, run))
