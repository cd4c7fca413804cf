"""What result.json says of a run on a system's Spark sink beyond the engine's own keys: the
system, its version, its Spark runtime and the jars it ran with (their checksums: what
exactly was judged), and the metrics nothing measured on it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from harness.runner.environment import environment
from harness.scenario import Scenario
from harness.systems.spark_stream.runtime_cache import SparkRuntime


def system_environment(
    scenario: Scenario, runtime: SparkRuntime, version: str, lock: dict[str, Any] | None = None
) -> dict[str, Any]:
    return {
        **environment(scenario.cluster.backend),
        "system": {
            "kind": scenario.system.kind,
            "version": version,
            "spark_runtime": {"pyspark": runtime.pyspark_version, "scala": runtime.scala},
            "jars": [
                {"path": jar, "sha256": digest}
                for jar, digest in zip(runtime.jars, runtime.jar_sha256, strict=True)
            ],
        },
        # A format's Spark sink makes and commits its commit inside the micro-batch.
        "instant_mode": {"requested": "inline", "effective": "inline"},
        "lock": lock or {"provider": "none (one writer)"},
        "storage": {"kind": scenario.table.storage.kind, "endpoint": None},
    }


def unmeasured(result: dict[str, Any], names: Iterable[str]) -> dict[str, Any]:
    """Metrics of the engine's own parts the system does not have: not zero but empty, so
    a comparison shows "-"."""
    for name in names:
        metric = result["metrics"].get(name)
        if isinstance(metric, dict):
            result["metrics"][name] = dict.fromkeys(metric)
    return result
