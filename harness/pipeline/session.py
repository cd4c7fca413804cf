"""SparkSession for a run: local[N,M] by default, or a standalone/docker master URL."""

from __future__ import annotations

import sys

from pyspark import SparkContext
from pyspark.sql import SparkSession

from harness.pipeline.jvm_archive import JvmArchive

DRIVER_JAVA_OPTIONS = "spark.driver.extraJavaOptions"
# This process's session's class-data archive (pyspark keeps one session per process).
_archive: JvmArchive | None = None


def local_master(cores: int, task_attempts: int) -> str:
    # local[N,M]: M attempts per task, so a hard-exited writer's task is retried.
    return f"local[{cores},{task_attempts}]"


def build_session(
    app_name: str, master: str, extra: dict[str, str] | None = None, *, ends_with_stop: bool = False
) -> SparkSession:
    """`ends_with_stop`: the process ends its session with `stop_session` (then its JVM may
    make the class-data archive, harness/pipeline/jvm_archive.py)."""
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
    extra = dict(extra or {})
    options = extra.pop(DRIVER_JAVA_OPTIONS, "")
    global _archive
    if SparkContext._active_spark_context is None:  # else getOrCreate keeps its JVM
        _archive = JvmArchive.for_session()
        if _archive is not None:
            # The archive's first: a scenario's own (cluster.spark_conf) come after them.
            options = " ".join(o for o in (_archive.java_options(ends_with_stop), options) if o)
    if options:
        builder = builder.config(DRIVER_JAVA_OPTIONS, options)
    for key, value in extra.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def stop_session(spark: SparkSession) -> None:
    """Stop the session; a JVM that makes the class-data archive exits and leaves it."""
    context = spark.sparkContext
    making = _archive is not None and _archive.making is not None
    jvm = context._jvm
    class_path = jvm.System.getProperty("java.class.path") if making and jvm else None
    gateway = getattr(context, "_gateway", None)
    spark.stop()
    if _archive is not None:
        _archive.finish(getattr(gateway, "proc", None), class_path)
