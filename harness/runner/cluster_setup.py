"""The run's Spark cluster: standalone processes or docker containers, or none (local)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.runner.rundir import RunPaths
from harness.scenario import Scenario

if TYPE_CHECKING:
    from infra.cluster import ClusterBackend


def start_cluster(scenario: Scenario, paths: RunPaths, **options: Any) -> ClusterBackend | None:
    """A standalone or docker cluster for this run (None for local mode), up and ready.
    `options` go to the backend (a system on a Spark runtime of its own passes its python
    and Spark home)."""
    if scenario.cluster.backend == "local":
        return None
    from infra.cluster import backend_for

    cluster = backend_for(
        scenario.cluster.backend,
        scenario.cluster.workers,
        scenario.cluster.cores_per_worker,
        paths.root / "cluster",
        mounts=[paths.root, paths.table],
        **options,
    )
    cluster.up()
    return cluster
