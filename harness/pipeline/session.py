"""SparkSession for a run: local[N,M] by default, or a standalone/docker master URL."""

from __future__ import annotations

import sys

from pyspark.sql import SparkSession


def local_master(cores: int, task_attempts: int) -> str:
    # local[N,M]: M attempts per task, so a hard-exited writer's task is retried.
    return f"local[{cores},{task_attempts}]"


def build_session(app_name: str, master: str, extra: dict[str, str] | None = None) -> SparkSession:
    builder = (
        SparkSession.builder.appName(app_name)
        .master(master)
        # Executors must run the driver's Python (DESIGN.md, practical notes).
        .config("spark.pyspark.python", sys.executable)
        .config("spark.pyspark.driver.python", sys.executable)
        # Loopback only: this harness never binds or dials a non-loopback address.
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        # Off for helper sessions (the Spark checks): one less server to start. The pipeline
        # driver turns it on (harness/runner/driver_config.py: spark_conf).
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.sql.streaming.noDataMicroBatches.enabled", "false")
        # Keep every offset and commit log entry (Spark purges all but the last 100): they
        # are the exactly-once check's ground truth (harness/runner/ground_truth.py).
        .config("spark.sql.streaming.minBatchesToRetain", "1000000")
        .config("spark.python.worker.reuse", "true")
        .config("spark.task.maxFailures", "4")
        .config("spark.log.level", "WARN")
    )
    for key, value in (extra or {}).items():
        builder = builder.config(key, value)
    return builder.getOrCreate()
