"""A table format's own Spark Structured Streaming sink (Delta, Iceberg), fed the landed
events. Run as a process of its own (its driver is what a coordinator_crash SIGKILLs),
with the project's python and pyspark 4.1, from one JSON config file:

    python stream_driver.py CONFIG.json

The config names the format and what it needs (its session settings, the SQL that creates
the table, the table's name for SQL). append and bank (each transfer's two legs appended,
after the opening balances): `writeStream.format(<format>)`, the format's
own idempotent sink (Delta's SetTransaction(query id, batch id), Iceberg's query id and
epoch id in the snapshot summary). upsert: `foreachBatch` with a MERGE of each key's newest
event in the batch, made idempotent as the format documents for foreachBatch (Delta: the
session's txnAppId/txnVersion; Iceberg has none, so a replay is the MERGE's to absorb). It
writes until the stop file appears, then drains (every landed file admitted, every
planned batch committed), stops and exits 0. Each finished micro-batch is one JSON line on
stdout ({"event": "batch", ...}).
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql.functions import row_number
from pyspark.sql.streaming import StreamingQuery, StreamingQueryListener

from harness.pipeline.jvm_archive import mapping_options
from harness.pipeline.session import DRIVER_JAVA_OPTIONS
from harness.systems.hudi.script_io import emit, script_main
from harness.systems.spark_stream.checkpoint_truth import local_path, read_truth

TXN_APP_ID = "spark.databricks.delta.write.txnAppId"
TXN_VERSION = "spark.databricks.delta.write.txnVersion"
STOP_BOUND_S = 30.0


def build_session(cfg: dict[str, Any]) -> SparkSession:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    conf = {
        "spark.jars": ",".join(cfg["jars"]),
        "spark.pyspark.python": sys.executable,
        "spark.driver.host": "127.0.0.1",
        "spark.driver.bindAddress": "127.0.0.1",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": str(cfg.get("shuffle_partitions", 2)),
        "spark.sql.streaming.noDataMicroBatches.enabled": "false",
        # Every offset, commit and source log entry is the exactly-once ground truth.
        "spark.sql.streaming.minBatchesToRetain": "1000000",
        "spark.sql.streaming.fileSource.log.deletion": "false",
        **cfg.get("session", {}),
        **{k: str(v) for k, v in cfg.get("spark_conf", {}).items()},
    }
    # Spark's own classes from the class-data archive the engine's drivers make: the same
    # java and Spark jars (the format's jar is loaded apart), a start a third faster.
    options = " ".join(o for o in (mapping_options(), conf.get(DRIVER_JAVA_OPTIONS, "")) if o)
    if options:
        conf[DRIVER_JAVA_OPTIONS] = options
    builder = SparkSession.builder.appName(cfg.get("app_name", f"{cfg['format']}-stream"))
    builder = builder.master(cfg.get("master", "local[2,4]"))
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(cfg.get("log_level", "WARN"))
    return spark


class BatchLines(StreamingQueryListener):
    """One JSON line per micro-batch that ran (idle triggers are skipped)."""

    def onQueryStarted(self, event: Any) -> None:
        emit("query_started", id=str(event.id), run_id=str(event.runId))

    def onQueryProgress(self, event: Any) -> None:
        progress = event.progress
        durations = dict(progress.durationMs or {})
        if "addBatch" not in durations:
            return
        emit(
            "batch",
            batch_id=progress.batchId,
            rows=progress.numInputRows,
            wall_ms=durations.get("triggerExecution"),
            add_batch_ms=durations.get("addBatch"),
        )

    def onQueryIdle(self, event: Any) -> None:
        return None

    def onQueryTerminated(self, event: Any) -> None:
        emit("query_terminated", exception=event.exception)


def merge_batch(cfg: dict[str, Any]) -> Any:
    """foreachBatch's function: MERGE the batch's newest event per key (under the session's
    txnAppId/txnVersion where the format has them: Delta skips a version it committed)."""
    table, key = cfg["table_sql"], cfg["record_key"]

    def merge(batch: DataFrame, batch_id: int) -> None:
        spark = batch.sparkSession
        newest = Window.partitionBy(key).orderBy(batch.event_id.desc())
        rows = batch.withColumn("_newest", row_number().over(newest))
        rows = rows.where("_newest = 1").drop("_newest")
        rows.createOrReplaceTempView("instantbench_batch")
        if cfg.get("txn_confs"):
            spark.conf.set(TXN_APP_ID, cfg["identifier"])
            spark.conf.set(TXN_VERSION, str(batch_id))
        spark.sql(
            f"MERGE INTO {table} t USING instantbench_batch s ON t.{key} = s.{key} "
            "WHEN MATCHED AND s.event_id > t.event_id THEN UPDATE SET * "
            "WHEN NOT MATCHED THEN INSERT *"
        )
        if cfg.get("txn_confs"):
            spark.conf.unset(TXN_APP_ID)
            spark.conf.unset(TXN_VERSION)

    return merge


def start_query(spark: SparkSession, cfg: dict[str, Any]) -> StreamingQuery:
    source = (
        spark.readStream.schema(cfg["schema"])
        .option("maxFilesPerTrigger", str(cfg.get("max_files_per_trigger", 1000)))
        .parquet(cfg["landing_dir"])
    )
    writer = source.writeStream.option("checkpointLocation", cfg["checkpoint_dir"])
    writer = writer.trigger(processingTime=f"{float(cfg['trigger_s'])} seconds")
    writer = writer.queryName(cfg.get("query_name", f"{cfg['format']}_sink"))
    if cfg["mode"] == "upsert":
        return writer.foreachBatch(merge_batch(cfg)).start()
    writer = writer.format(cfg["format"]).outputMode("append")
    if cfg["stream_by_name"]:  # a catalog's table (Iceberg's JDBC) has no path to start at
        return writer.toTable(cfg["table_sql"])
    return writer.start(cfg["table_path"])  # Delta refuses toTable on a path-based table


def create_table(spark: SparkSession, cfg: dict[str, Any]) -> None:
    """The table (its first commit, before the stream's) and, in bank mode, the opening
    balances (ids -1 - account: never a leg's) unless a driver before this one committed
    them: one commit that names no batch, which every later read must hold."""
    for statement in cfg["create_sql"]:
        spark.sql(statement)
    opening, table = cfg.get("opening"), cfg["table_sql"]
    if opening is None:
        return
    row = spark.sql(f"SELECT count(*) FROM {table} WHERE id < 0").first()
    if row is not None and row[0] == 0:
        spark.sql(f"INSERT INTO {table} SELECT * FROM parquet.`{opening}`")
        emit("opened", path=opening)


def drained(cfg: dict[str, Any]) -> bool:
    """Every landed file admitted by a batch, and every planned batch committed."""
    truth = read_truth(cfg["checkpoint_dir"])
    if truth.problems or truth.pending_batches:
        return False
    admitted = {local_path(uri).name for uri in truth.committed_files()}
    landed = {n for n in os.listdir(cfg["landing_dir"]) if n.endswith(".parquet")}
    return landed <= admitted


def run(cfg: dict[str, Any]) -> int:
    t0 = time.monotonic()
    spark = build_session(cfg)
    spark.streams.addListener(BatchLines())
    create_table(spark, cfg)
    query = start_query(spark, cfg)
    emit("started", startup_s=round(time.monotonic() - t0, 3), pid=os.getpid())
    while not os.path.exists(cfg["stop_file"]):
        if query.exception() is not None or not query.isActive:
            emit("failed", error=str(query.exception()))
            return 1
        time.sleep(0.1)
    deadline = time.monotonic() + float(cfg.get("stop_wait_s", 60))
    while query.isActive and time.monotonic() < deadline and not drained(cfg):
        time.sleep(0.1)
    drained_ok = drained(cfg)
    emit("stopping", drained=drained_ok)
    query.stop()
    emit("stopped", drained=drained_ok)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(script_main(sys.argv, run))
