"""Where a cluster's daemons listen and what they are told: its addresses, the files in its
work dir (logs, clocks, the daemons' properties) and the spark-class arguments of the
master and the workers, the same for processes and containers."""

from __future__ import annotations

import os
from pathlib import Path

from infra.cluster.addresses import WORKER_WEB_PORT, check_port_free, worker_host
from infra.cluster.clocks import write_clock_file

WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"


class ClusterLayout:
    """Mixed into ClusterBackend, whose __init__ sets these settings."""

    workers: int
    cores_per_worker: int
    work_dir: Path
    master_host: str
    master_port: int
    web_port: int
    worker_memory: str
    clock_control: bool
    secret: str

    @property
    def master_url(self) -> str:
        return f"spark://{self.master_host}:{self.master_port}"

    @property
    def web_url(self) -> str:
        return f"http://{self.master_host}:{self.web_port}"

    def worker_host(self, n: int) -> str:
        return worker_host(self.master_host, n)

    @property
    def log_dir(self) -> Path:
        return self.work_dir / "logs"

    def _master_log(self) -> Path:
        return self.log_dir / "master.log"

    def _worker_log(self, n: int) -> Path:
        return self.log_dir / f"worker-{n}.log"

    def clock_file(self, n: int) -> Path:
        return self.work_dir / "clocks" / f"worker-{n}.faketime"

    @property
    def properties_file(self) -> Path:
        """Spark properties of the master and the workers (--properties-file), mode 0600:
        it holds the cluster's secret."""
        return self.work_dir / "conf" / "spark-daemon.properties"

    def daemon_properties(self) -> dict[str, str]:
        return {
            "spark.authenticate": "true",
            "spark.authenticate.secret": self.secret,
            "spark.master.rest.enabled": "false",  # no unauthenticated submission port
            "spark.ui.killEnabled": "false",
            "spark.worker.cleanup.enabled": "false",
        }

    def _prepare_dirs(self) -> None:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        if self.clock_control:
            (self.work_dir / "clocks").mkdir(parents=True, exist_ok=True)
        self.properties_file.parent.mkdir(parents=True, exist_ok=True)
        self.properties_file.unlink(missing_ok=True)
        fd = os.open(self.properties_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.writelines(f"{k} {v}\n" for k, v in self.daemon_properties().items())

    def _addresses(self, workers: int) -> list[tuple[str, int]]:
        """The fixed addresses a cluster listens on (other ports are ephemeral)."""
        return [
            (self.master_host, self.master_port),
            (self.master_host, self.web_port),
            *((self.worker_host(n), WORKER_WEB_PORT) for n in range(1, workers + 1)),
        ]

    def _check_ports(self) -> None:
        for host, port in self._addresses(self.workers):
            check_port_free(host, port)

    def _master_args(self, main_class: str) -> list[str]:
        """spark-class arguments of the master, the same for processes and containers."""
        return [
            main_class,
            "--properties-file",
            str(self.properties_file),
            "--host",
            self.master_host,
            "--port",
            str(self.master_port),
            "--webui-port",
            str(self.web_port),
        ]

    def _worker_args(self, host: str, work_dir: Path) -> list[str]:
        """spark-class arguments of worker `host`, the same for processes and containers."""
        return [
            WORKER_CLASS,
            "--properties-file",
            str(self.properties_file),
            "--host",
            host,
            "--cores",
            str(self.cores_per_worker),
            "--memory",
            self.worker_memory,
            "--work-dir",
            str(work_dir),
            "--webui-port",
            str(WORKER_WEB_PORT),
            self.master_url,
        ]

    def _worker_clock_offset(self, n: int) -> float | None:
        """The clock offset (ms) worker n starts with under libfaketime, creating its
        clock file at 0 under clock_control; None if it runs on the real clock."""
        if not (self.clock_control or self.clock_file(n).exists()):
            return None
        if not self.clock_file(n).exists():
            self._set_clock_file(n, 0.0)
        return float(self.clock_file(n).read_text()) * 1000.0

    def _set_clock_file(self, n: int, offset_ms: float) -> None:
        self.clock_file(n).parent.mkdir(parents=True, exist_ok=True)
        write_clock_file(self.clock_file(n), offset_ms)
