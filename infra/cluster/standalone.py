"""Spark standalone from the pip-installed pyspark: a master and N worker processes, each
on its own loopback address, each worker in its own process group (worker JVM, executor
JVM, the executor's Python workers), so a worker fault hits all of them at once."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from infra.cluster.base import ClusterBackend
from infra.cluster.clocks import FAKETIME_LIB, faketime_env
from infra.cluster.info import CLUSTER_ENV, OWNER_ENV, ClusterError, ClusterInfo, WorkerInfo
from infra.cluster.procs import (
    alive,
    pids_with_env,
    proc_state,
    process_group,
    signal_group,
    terminate,
    wait_gone,
    wait_ports_free,
)

MASTER_CLASS = "org.apache.spark.deploy.master.Master"
DAEMON_MEMORY = "512m"


def spark_home() -> Path:
    """The project's pip package's Spark (pyspark/), found without importing pyspark."""
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        raise ClusterError("pyspark is not installed: pip install pyspark")
    return Path(next(iter(spec.submodule_search_locations)))


class StandaloneBackend(ClusterBackend):
    name = "standalone"

    def __init__(
        self,
        *args: Any,
        python: str | None = None,
        spark_home: Path | None = None,
        **kwargs: Any,
    ) -> None:
        """`python` and `spark_home`: another Spark runtime's (a system under test on a
        Spark line of its own, harness/systems/hudi/runtime.py); the project's by default."""
        super().__init__(*args, **kwargs)
        self.python = python or sys.executable
        self.spark_home = spark_home
        self._procs: dict[str, subprocess.Popen] = {}  # reaped by this process when ours

    def executor_python(self) -> str:
        return self.python

    @property
    def spark_class(self) -> Path:
        return self.home / "bin" / "spark-class"

    @property
    def home(self) -> Path:
        return self.spark_home or spark_home()

    # --- processes -------------------------------------------------------------------
    def _env(self, host: str) -> dict[str, str]:
        env = dict(os.environ)
        for key in ("SPARK_HOME", "SPARK_CONF_DIR", "PYSPARK_DRIVER_PYTHON", "LD_PRELOAD"):
            env.pop(key, None)
        env.update(
            {
                "SPARK_HOME": str(self.home),
                "SPARK_LOCAL_IP": host,
                "SPARK_DAEMON_MEMORY": DAEMON_MEMORY,
                "PYSPARK_PYTHON": self.python,
                CLUSTER_ENV: self.cluster_id,
                OWNER_ENV: str(os.getpid()) if self.owned else "",
            }
        )
        return env

    def _launcher(self, key: str) -> list[str]:
        """What a daemon's command line starts with (nothing: it runs on this host)."""
        return []

    def _spawn(self, key: str, args: list[str], env: dict[str, str], log: Path) -> int:
        cmd = [*self._launcher(key), str(self.spark_class), *args]
        with open(log, "ab") as out:
            proc = subprocess.Popen(
                cmd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=self.work_dir,
                start_new_session=True,  # its own process group: faults hit the whole tree
            )
        self._procs[key] = proc
        return proc.pid

    def _reap(self) -> None:
        for proc in self._procs.values():
            proc.poll()

    def _preflight(self) -> None:
        if not self.spark_class.exists():
            raise ClusterError(f"{self.spark_class} is missing: reinstall pyspark")

    def _start_master(self, info: ClusterInfo) -> None:
        args = self._master_args(MASTER_CLASS)
        info.master_pid = self._spawn(
            "master", args, self._env(self.master_host), self._master_log()
        )

    def _start_worker(self, n: int) -> WorkerInfo:
        host = self.worker_host(n)
        wdir = self.work_dir / f"worker-{n}"
        (wdir / "local").mkdir(parents=True, exist_ok=True)
        env = self._env(host)
        env["SPARK_WORKER_DIR"] = str(wdir)
        env["SPARK_LOCAL_DIRS"] = str(wdir / "local")
        offset = self._worker_clock_offset(n)
        if offset is not None:
            if not Path(FAKETIME_LIB).exists():
                raise ClusterError(
                    f"clock control needs libfaketime ({FAKETIME_LIB}): apt-get install faketime"
                )
            env.update(faketime_env(self.clock_file(n), skip_java=self.clock_skip_java))
        args = self._worker_args(host, wdir)
        pid = self._spawn(f"worker-{n}", args, env, self._worker_log(n))
        return WorkerInfo(index=n, host=host, pid=pid, clock_offset_ms=offset)

    # --- the interface -----------------------------------------------------------------
    def down(self) -> None:
        with self._lock:
            pids: set[int] = set()
            info = self.info
            if info is not None:
                for pid in [info.master_pid, *(w.pid for w in info.workers)]:
                    if pid is not None:
                        pids.update(process_group(pid))
            # Anything else that carries this cluster's marker (executors, Python workers,
            # processes of an earlier run of this cluster that crashed).
            pids.update(pids_with_env(CLUSTER_ENV, self.cluster_id))
            pids.discard(os.getpid())
            terminate(sorted(pids))
            self._reap()
            self._procs.clear()
            if info is not None:  # the next cluster can bind these addresses at once
                self._wait_ports_free(len(info.workers))
            self.info = None

    def _wait_ports_free(self, workers: int) -> None:
        wait_ports_free(self._addresses(workers), 10.0)

    def _signal_worker(self, n: int, sig: int) -> WorkerInfo:
        w = self.require_info().worker(n)
        if w.pid is None or not alive(w.pid):
            raise ClusterError(f"worker:{n} is not running (state {w.state})")
        signal_group(w.pid, sig)
        return w

    def kill_worker(self, n: int) -> None:
        with self._lock:
            w = self.require_info().worker(n)
            if w.pid is not None:
                members = process_group(w.pid)
                signal_group(w.pid, signal.SIGKILL)
                wait_gone(members, 5.0)
                proc = self._procs.get(f"worker-{n}")
                if proc is not None and proc.pid == w.pid:
                    proc.wait(5.0)
            self._reap()
            w.state = "killed"

    def pause_worker(self, n: int) -> None:
        with self._lock:
            self._signal_worker(n, signal.SIGSTOP).state = "paused"

    def resume_worker(self, n: int) -> None:
        with self._lock:
            self._signal_worker(n, signal.SIGCONT).state = "running"

    def worker_pids(self, n: int) -> list[int]:
        """Every process of worker n: the worker JVM, its executor, Python workers."""
        w = self.require_info().worker(n)
        return [] if w.pid is None else process_group(w.pid)

    def _worker_status(self, w: WorkerInfo) -> dict[str, Any]:
        state = None if w.pid is None else proc_state(w.pid)
        return {"alive": alive(w.pid), "process_state": state}

    def _master_alive(self) -> bool:
        info = self.info
        return info is not None and alive(info.master_pid)
