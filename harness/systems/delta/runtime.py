"""Delta Lake's Spark runtime: the project's own pyspark (4.1) and the Delta jars.

Delta 4.4.0 is built for Spark 4.1 (`delta-spark_4.1_2.13`), the project's own Spark line,
so it needs no venv: only its jars, fetched once with the machine's Maven client into the
runtimes' cache (harness/systems/spark_stream/runtime_cache.py). Of the dependencies its
POM names, Spark provides the Hadoop, Parquet, Jackson and Scala jars; the sink and the
reader need delta-storage beside delta-spark (the kernel jars serve Delta Kernel's
connectors, which neither loads).
"""

from __future__ import annotations

from pathlib import Path

from harness.systems.spark_stream.runtime_cache import (
    SparkRuntime,
    project_runtime,
)

DEFAULT_VERSION = "4.4.0"
SPARK_LINE = "4.1"  # the Spark minor the jars are built for (the artifact's _4.1 suffix)
SCALA = "2.13"
DELTA_RUNTIMES: dict[str, tuple[str, ...]] = {
    "4.4.0": ("io.delta:delta-spark_4.1_2.13:4.4.0", "io.delta:delta-storage:4.4.0"),
}


def ensure_runtime(version: str = DEFAULT_VERSION, root: Path | None = None) -> SparkRuntime:
    """Delta `version`'s runtime, its jars fetched on first use; RuntimeUnavailable (one
    line, naming what is missing) when it cannot be had."""
    return project_runtime(f"delta {version}", DELTA_RUNTIMES, version, SPARK_LINE, SCALA, root)
