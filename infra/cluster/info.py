"""What describes a running cluster (ClusterInfo, WorkerInfo), how its processes are
recognised (the environment markers), and the error every backend raises."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

# Env marker carried by every process a cluster starts (inherited by executors and their
# Python workers): down() finds stragglers by it.
CLUSTER_ENV = "INSTANTBENCH_CLUSTER_ID"
OWNER_ENV = "INSTANTBENCH_CLUSTER_OWNER"


class ClusterError(RuntimeError):
    """The cluster could not be started, reached or changed."""


@dataclass
class WorkerInfo:
    index: int  # 1-based: the N of a fault's `target: worker:N`
    host: str  # its own loopback address
    pid: int | None = None  # standalone: the worker JVM (leader of its process group);
    #                         docker: the container's main process as seen from the host
    container: str | None = None  # docker: the container id
    name: str | None = None  # docker: the container name
    state: str = "running"  # running | paused | killed
    clock_offset_ms: float | None = None  # None: no libfaketime in this worker


@dataclass
class ClusterInfo:
    backend: str
    cluster_id: str
    master_url: str  # spark://127.0.0.10:7077
    web_url: str  # http://127.0.0.10:8080
    work_dir: str
    workers: list[WorkerInfo]
    master_pid: int | None = None
    master_container: str | None = None
    owner_pid: int | None = None  # the process that started it (None: started by hand)
    # What the driver must use for this cluster: Spark settings (merge them into the
    # session's config) and environment variables of the driver process (PYSPARK_PYTHON:
    # PySpark ships the driver's PYSPARK_PYTHON to executors as the Python to run).
    spark_conf: dict[str, str] = field(default_factory=dict)
    driver_env: dict[str, str] = field(default_factory=dict)
    mounts: list[str] = field(default_factory=list)
    image: str | None = None  # docker: the image the containers run
    cores_per_worker: int = 1
    network: dict[str, Any] | None = None  # hosts: its network (infra.hosts.HostNetwork)

    def worker(self, n: int) -> WorkerInfo:
        for w in self.workers:
            if w.index == n:
                return w
        raise ClusterError(f"no worker:{n}; this cluster has workers 1..{len(self.workers)}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClusterInfo:
        data = dict(data)
        data["workers"] = [WorkerInfo(**w) for w in data.get("workers", [])]
        return cls(**data)
