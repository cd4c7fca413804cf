"""Spark clusters for scenario runs: `standalone` processes, `docker` containers, or
processes on `hosts` of their own (network namespaces, infra/hosts).

    from infra.cluster import backend_for
    with backend_for("standalone", 2, 1, run_dir / "cluster") as c:
        c.info.master_url      # spark://127.0.0.10:7077
        c.kill_worker(1)       # worker faults: kill / pause / resume / restart / set clock

Nothing here imports pyspark or the harness at import time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from infra.cluster.addresses import MASTER_HOST
from infra.cluster.base import ClusterBackend
from infra.cluster.info import ClusterError, ClusterInfo, WorkerInfo
from infra.cluster.master_ui import master_json

BACKENDS = ("standalone", "docker", "hosts")


def backend_class(name: str) -> type[ClusterBackend]:
    if name == "standalone":
        from infra.cluster.standalone import StandaloneBackend

        return StandaloneBackend
    if name == "docker":
        from infra.cluster.containers import DockerBackend

        return DockerBackend
    if name == "hosts":
        from infra.cluster.hosts import HostsBackend

        return HostsBackend
    raise ClusterError(f"unknown cluster backend {name!r}; allowed: {', '.join(BACKENDS)}")


def backend_for(
    name: str, workers: int, cores_per_worker: int, work_dir: Path, **options: Any
) -> ClusterBackend:
    """A cluster backend, not started yet (call up(), or use it as a context manager).

    options (keyword): master_host ("127.0.0.10"; workers take the next addresses),
    master_port (7077), web_port (8080), worker_memory ("2g"), executor_memory ("1g"),
    mounts (docker: directories bound at the same path, e.g. the run and table dirs;
    work_dir always is), clock_control (every worker under libfaketime, offset 0, so that
    set_worker_clock(n, ms) works), clock_skip_java (fake only non-Java processes),
    start_timeout_s (120), owned (True: started by this process; False: by hand),
    image (docker: default infra.docker.image.image_tag()).
    """
    return backend_class(name)(workers, cores_per_worker, Path(work_dir), **options)


def reap_orphans(backend: str | None = None) -> list[str]:
    """Kill / remove what clusters of dead runs left behind (see infra.cluster.reap)."""
    from infra.cluster.reap import reap_orphans as reap

    return reap(backend)


def attach(info: ClusterInfo) -> ClusterBackend:
    """A backend object for a cluster described by info (e.g. from a state file)."""
    return backend_class(info.backend).attach(info)


__all__ = [
    "BACKENDS",
    "MASTER_HOST",
    "ClusterBackend",
    "ClusterError",
    "ClusterInfo",
    "WorkerInfo",
    "attach",
    "backend_for",
    "master_json",
    "reap_orphans",
]
