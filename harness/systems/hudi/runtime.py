"""Hudi's Spark runtime: a pyspark of its own in a venv, and the Hudi bundle jar.

No Hudi bundle for Spark 4 is served here, so Hudi runs on pyspark 3.5 (Scala 2.12) beside
the project's pyspark 4.1 (DESIGN.md "Spark runtimes"). Both are made the first time a run
needs them, in the runtimes' cache (harness/systems/spark_stream/runtime_cache.py). What
the runtime-side scripts (stream_driver.py, reader.py) import beyond the standard library
is pyspark alone: Spark writes the reader's Parquet, so no pyarrow, pandas or numpy.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.systems.spark_stream.class_archive import ensure_class_archive
from harness.systems.spark_stream.runtime_cache import (
    RuntimeUnavailable,
    SparkRuntime,
    ensure_jar,
    ensure_venv,
    runtime_of,
)

DEFAULT_VERSION = "1.2.0"


@dataclass(frozen=True)
class RuntimeSpec:
    pyspark: str
    scala: str
    artifacts: tuple[str, ...]  # Maven coordinates, groupId:artifactId:version


# Hudi version -> its Spark runtime. A new Hudi version, or a Spark 4 bundle once it is
# served, is one line here.
HUDI_RUNTIMES: dict[str, RuntimeSpec] = {
    "1.2.0": RuntimeSpec("3.5.9", "2.12", ("org.apache.hudi:hudi-spark3.5-bundle_2.12:1.2.0",)),
}


def ensure_runtime(version: str = DEFAULT_VERSION, root: Path | None = None) -> SparkRuntime:
    """Hudi `version`'s Spark runtime, made and cached on first use; RuntimeUnavailable
    (one line, naming what is missing) when it cannot be had."""
    who = f"hudi {version}"
    spec = HUDI_RUNTIMES.get(version)
    if spec is None:
        known = ", ".join(sorted(HUDI_RUNTIMES))
        raise RuntimeUnavailable(f"{who} has no known Spark runtime (known: {known})")
    jars = [ensure_jar(coordinate, who, root) for coordinate in spec.artifacts]
    python = ensure_venv(spec.pyspark, who, root)
    ensure_class_archive(python)  # its drivers start a third faster (a speed-up only)
    return runtime_of(str(python), spec.pyspark, spec.scala, jars)
