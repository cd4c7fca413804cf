"""Apache Iceberg's Spark runtime: the project's own pyspark (4.1) and Iceberg's runtime jar.

`iceberg-spark-runtime-4.1_2.13` is self-contained (it shades what it needs), so it is the
one jar, fetched once with the machine's Maven client into the runtimes' cache
(harness/systems/spark_stream/runtime_cache.py).
"""

from __future__ import annotations

from pathlib import Path

from harness.systems.spark_stream.runtime_cache import (
    SparkRuntime,
    project_runtime,
)

DEFAULT_VERSION = "1.11.0"
SPARK_LINE = "4.1"
SCALA = "2.13"
ICEBERG_RUNTIMES = {
    "1.11.0": (
        "org.apache.iceberg:iceberg-spark-runtime-4.1_2.13:1.11.0",
        # The JDBC catalog's driver: a SQLite file serialises commits across processes.
        "org.xerial:sqlite-jdbc:3.54.1.0",
    )
}


def ensure_runtime(version: str = DEFAULT_VERSION, root: Path | None = None) -> SparkRuntime:
    """Iceberg `version`'s runtime, its jar fetched on first use; RuntimeUnavailable (one
    line, naming what is missing) when it cannot be had."""
    return project_runtime(f"iceberg {version}", ICEBERG_RUNTIMES, version, SPARK_LINE, SCALA, root)
