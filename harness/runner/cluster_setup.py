"""The run's Spark cluster: standalone processes or docker containers, or none (local)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.runner.rundir import RunPaths
from harness.scenario import Scenario

if TYPE_CHECKING:
    from infra.cluster import ClusterBackend


def start_cluster(scenario: Scenario, paths: RunPaths, **options: Any) -> ClusterBackend | None:
    """A standalone or docker cluster for this run (None for local mode), up and ready,
    its master on infra's default_master_host(). `options` go to the backend (a system on
    a Spark runtime of its own passes its python and Spark home)."""
    if scenario.cluster.backend == "local":
        return None
    from infra.cluster import backend_for
    from infra.cluster.addresses import default_master_host

    cluster = backend_for(
        scenario.cluster.backend,
        scenario.cluster.workers,
        scenario.cluster.cores_per_worker,
        paths.root / "cluster",
        mounts=[paths.root, paths.table],
        **{"master_host": default_master_host(), **options},
    )
    cluster.up()
    return cluster
