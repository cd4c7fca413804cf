"""Read a Hudi table with Hudi's own Spark reader and leave Parquet a judge reads without Spark.

Run by the Hudi runtime's python (pyspark 3.5): imports only pyspark and the standard
library, takes one JSON config file:

    python reader.py CONFIG.json

Config: table_path, out_dir, jars, master (default local[2]), and optionally `as_of`
(instant times for `as.of.instant` time travel) and `incremental` ([begin, end] pairs of
completion times; Hudi 1.x's incremental query selects by completion time). Each read is
written by Spark's own Parquet writer to out_dir/<kind>/<name>/ (one file), with the
columns id, event_id, _hoodie_commit_time and, when the table has them, account, amount.
out_dir/manifest.json lists every read: kind, name, options, rows, seconds, or the error
(one failed read does not hide the others: the judge marks what is missing `unknown`).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from pyspark.sql import DataFrame, SparkSession

KRYO = {
    "spark.serializer": "org.apache.spark.serializer.KryoSerializer",
    "spark.kryo.registrator": "org.apache.spark.HoodieSparkKryoRegistrar",
    "spark.sql.extensions": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.hudi.catalog.HoodieCatalog",
}
# Hudi sizes records with JOL, which otherwise tries to attach the Serviceability Agent and
# a Java agent to its own JVM: on Java 17 here both fail, with warnings on stdout (the
# driver's JSON lines). Skipped, JOL sizes objects without them. Spark 3.5.9 itself adds
# the --add-opens Java 17 needs to the driver's and the executors' options
# (SparkContext.supplementJavaModuleOptions): Hudi needs no more.
JAVA_OPTIONS = "-Djol.skipDynamicAttach=true -Djol.skipHotspotSAAttach=true"
JAVA_OPTION_KEYS = ("spark.driver.extraJavaOptions", "spark.executor.extraJavaOptions")
KEY_COLUMNS = ["id", "event_id", "_hoodie_commit_time"]
OPTIONAL_COLUMNS = ["account", "amount"]


def session_conf(cfg: dict[str, Any]) -> dict[str, str]:
    """Hudi's session settings, then the config's own (JVM options are appended, not lost).
    The same as stream_driver.py's: each script runs alone, with nothing of the project."""
    conf = {**KRYO, **{key: JAVA_OPTIONS for key in JAVA_OPTION_KEYS}}
    for key, value in cfg.get("spark_conf", {}).items():
        conf[key] = f"{conf[key]} {value}" if key in JAVA_OPTION_KEYS else str(value)
    return conf


def build_session(cfg: dict[str, Any]) -> SparkSession:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    builder = (
        SparkSession.builder.appName("hudi-reader")
        .master(cfg.get("master", "local[2]"))
        .config("spark.jars", ",".join(cfg["jars"]))
        .config("spark.pyspark.python", sys.executable)
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
    )
    for key, value in session_conf(cfg).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def project(frame: DataFrame) -> DataFrame:
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
        frame = project(spark.read.format("hudi").options(**options).load(cfg["table_path"]))
        # One file per read: the judge loads a folder, and a few thousand rows need no more.
        frame.coalesce(1).write.mode("overwrite").parquet(out)
        entry["rows"] = spark.read.parquet(out).count()
    except Exception as exc:  # recorded, not raised: the other reads still count
        entry["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    entry["seconds"] = round(time.monotonic() - t0, 3)
    return entry


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: reader.py CONFIG.json", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as handle:
        cfg = json.load(handle)
    os.makedirs(cfg["out_dir"], exist_ok=True)
    spark = build_session(cfg)
    entries = [run_read(spark, cfg, read) for read in plan(cfg)]
    spark.stop()
    manifest = os.path.join(cfg["out_dir"], "manifest.json")
    with open(manifest + ".tmp", "w", encoding="utf-8") as handle:
        json.dump({"reads": entries}, handle, indent=1)
    os.replace(manifest + ".tmp", manifest)  # present only once every read is recorded
    return 0 if all("error" not in e for e in entries) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
