"""Apache Hudi's own Spark Structured Streaming sink, fed the landed events.

Run by the Hudi runtime's python (pyspark 3.5), not the project's: it imports only pyspark
and the standard library, and takes everything from one JSON config file:

    python stream_driver.py CONFIG.json

It reads the landing folder with Spark's file source, writes `format("hudi")` until the
stop file appears, then drains (the caller stops landing first: see `drain`), stops the
query and exits 0. Each finished micro-batch is one JSON line on stdout ({"event":
"batch", ...}) for metrics; a line {"event": "started"} says the query is running.
Hudi's sink calls System.exit after its last failed retry, so this always runs as a
process of its own.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql.functions import lit
from pyspark.sql.streaming import StreamingQuery, StreamingQueryListener

try:  # imported as a module of the project (its tests)
    from harness.systems.hudi.script_io import emit, script_main
    from harness.systems.hudi.spark_session import build_session as build_shared_session
    from harness.systems.hudi.table_options import LEDGER_COLUMN, LEGS, table_options
    from harness.systems.hudi.task_crash_stage import with_crash_stage
except ImportError:  # run as a script by the Hudi runtime's python: the modules are beside it
    from script_io import emit, script_main  # type: ignore[no-redef]
    from spark_session import build_session as build_shared_session  # type: ignore[no-redef]
    from table_options import LEDGER_COLUMN, LEGS, table_options  # type: ignore[no-redef]
    from task_crash_stage import with_crash_stage  # type: ignore[no-redef]

INFO_LOGGERS = ["org.apache.hudi.HoodieStreamingSink"]
STOP_BOUND_S = 30.0  # how long the query's stop, then the session's, may take


def build_session(cfg: dict[str, Any]) -> SparkSession:
    extra = {
        "spark.sql.shuffle.partitions": str(cfg.get("shuffle_partitions", 2)),
        "spark.sql.streaming.noDataMicroBatches.enabled": "false",
        # Keep every offset, commit and source log entry: they are the exactly-once
        # ground truth (checkpoint_truth.py); Spark purges all but the last 100.
        "spark.sql.streaming.minBatchesToRetain": "1000000",
        "spark.sql.streaming.fileSource.log.deletion": "false",
        # A stop that interrupts Hudi's async compactor can wait forever: bounded.
        "spark.sql.streaming.stopTimeout": str(int(STOP_BOUND_S * 1000)),
        # A cluster's: its secret, the executors' python, cores and memory.
        **cfg.get("cluster_conf", {}),
    }
    spark = build_shared_session(cfg, cfg.get("app_name", "hudi-stream"), "local[2,4]", extra)
    info_loggers(spark, cfg.get("info_loggers", INFO_LOGGERS))
    return spark


def info_loggers(spark: SparkSession, names: list[str]) -> None:
    """INFO for a few loggers under a WARN root: the sink's "Skipping already completed
    batch N" is the evidence that a replayed batch was recognised, not written twice."""
    jvm = spark.sparkContext._jvm
    if jvm is None:
        return
    level = jvm.org.apache.logging.log4j.Level.INFO
    for name in names:
        jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(name, level)


def hudi_options(cfg: dict[str, Any]) -> dict[str, str]:
    """The sink's options: the table's own, and how the sink writes a batch to it."""
    return {
        **table_options(cfg),
        "hoodie.datasource.write.operation": "insert" if cfg["mode"] == "append" else "upsert",
        # The sink records identifier -> batch id in each commit's metadata and skips a
        # replayed batch it already committed; named, so a second writer cannot share it.
        "hoodie.datasource.write.streaming.checkpoint.identifier": cfg["identifier"],
        "checkpointLocation": cfg["checkpoint_dir"],
    }


class BatchLines(StreamingQueryListener):
    """One JSON line per micro-batch that ran (Spark also reports idle triggers: skipped)."""

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
            timestamp=progress.timestamp,
        )

    def onQueryIdle(self, event: Any) -> None:
        return None

    def onQueryTerminated(self, event: Any) -> None:
        emit("query_terminated", exception=event.exception)


def start_query(spark: SparkSession, cfg: dict[str, Any]) -> StreamingQuery:
    source = (
        spark.readStream.schema(cfg["schema"])
        .option("maxFilesPerTrigger", str(cfg.get("max_files_per_trigger", 1000)))
        .parquet(cfg["landing_dir"])
    )
    if cfg["mode"] == "bank":  # transfer legs go to their partition (table_options.py)
        source = source.withColumn(LEDGER_COLUMN, lit(LEGS))
    if cfg.get("task_crash"):  # a writer crash: a Python stage whose worker can die
        source = with_crash_stage(spark, source, cfg["task_crash"])
    return (
        source.writeStream.format("hudi")
        .options(**hudi_options(cfg))
        .outputMode("append")
        .trigger(processingTime=f"{float(cfg['trigger_s'])} seconds")
        .queryName(cfg.get("query_name", "hudi_sink"))
        .start(cfg["table_path"])
    )


def _log_ids(folder: str) -> list[int]:
    try:
        return sorted(int(n) for n in os.listdir(folder) if n.isdigit())
    except FileNotFoundError:
        return []


def _admitted(sources: str) -> set[str]:
    """Names of the files the file source's log admitted (its entries and compactions)."""
    names: set[str] = set()
    for entry in os.listdir(sources) if os.path.isdir(sources) else []:
        if entry.startswith("."):
            continue
        with open(os.path.join(sources, entry), encoding="utf-8") as log:
            for line in log:
                if line.startswith("{"):
                    names.add(os.path.basename(json.loads(line)["path"]))
    return names


def drained(cfg: dict[str, Any]) -> bool:
    """Every landed file was admitted by a batch and every planned batch is committed."""
    landed = {
        n
        for n in os.listdir(cfg["landing_dir"])
        if n.endswith(".parquet") and not n.startswith(".")
    }
    checkpoint = cfg["checkpoint_dir"]
    planned = _log_ids(os.path.join(checkpoint, "offsets"))
    committed = _log_ids(os.path.join(checkpoint, "commits"))
    sources = os.path.join(checkpoint, "sources", "0")
    return planned[-1:] == committed[-1:] and landed <= _admitted(sources)


def drain(query: StreamingQuery, cfg: dict[str, Any], limit_s: float) -> bool:
    """Wait until the query committed everything landed; False if `limit_s` passed.

    Structured Streaming has no graceful stop: stop() interrupts a running batch, and Hudi
    then rolls the instant back or retries it while the query shuts down. So the caller
    stops landing first, and the stop waits until Spark's checkpoint shows every landed
    file admitted and every planned batch committed (a restarted query that has not run
    its first trigger yet is not idle, however its status reads).
    """
    deadline = time.monotonic() + limit_s
    while query.isActive and time.monotonic() < deadline:
        if drained(cfg):
            return True
        time.sleep(0.1)
    return False


def run(cfg: dict[str, Any]) -> int:
    t0 = time.monotonic()
    # The driver JVM's environment (libfaketime for a clock fault): the JVM that pyspark
    # starts next inherits it; this python, already running, does not load it.
    os.environ.update(cfg.get("jvm_env", {}))
    spark = build_session(cfg)
    emit("session", startup_s=round(time.monotonic() - t0, 3))
    spark.streams.addListener(BatchLines())
    query = start_query(spark, cfg)
    emit("started", startup_s=round(time.monotonic() - t0, 3), pid=os.getpid())
    stop_file = cfg["stop_file"]
    while not os.path.exists(stop_file):
        if query.exception() is not None or not query.isActive:
            emit("failed", error=str(query.exception()))
            return 1
        time.sleep(0.1)
    drained_ok = drain(query, cfg, float(cfg.get("stop_wait_s", 60)))
    emit("stopping", drained=drained_ok)
    try:
        query.stop()
    except Exception as exc:  # the stop timed out (a compaction it interrupted hung)
        emit("stop_timed_out", error=str(exc).splitlines()[0][:300])
    last: dict[str, Any] = query.lastProgress or {}
    emit("stopped", drained=drained_ok, last_progress_batch=last.get("batchId"))
    # Everything is committed and said: a SparkContext whose shutdown hangs on a thread
    # Hudi left behind does not hold the exit (the JVM ends with this python).
    closing = threading.Thread(target=spark.stop, name="spark-stop", daemon=True)
    closing.start()
    closing.join(STOP_BOUND_S)
    return 0


if __name__ == "__main__":
    sys.exit(script_main(sys.argv, run))
