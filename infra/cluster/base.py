"""The cluster backend interface: start a Spark master and N workers, hand out the master
URL, inject worker faults, tear everything down.

Every backend binds loopback addresses only (infra/cluster/addresses.py); where its daemons
listen and what they are told is infra/cluster/layout.py. Nothing here imports pyspark or
the harness.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import threading
import time
import uuid
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

from infra.cluster.addresses import MASTER_HOST, MASTER_PORT, WEB_PORT
from infra.cluster.info import ClusterError, ClusterInfo, WorkerInfo
from infra.cluster.layout import ClusterLayout
from infra.cluster.master_ui import alive_worker_hosts, master_json

START_TIMEOUT_S = 120.0


def tail(path: Path, lines: int = 20) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(text[-lines:])


class ClusterBackend(ClusterLayout, ABC):
    """A Spark master and `workers` workers on loopback addresses.

    Use as a context manager (up on enter, down on exit, also on an exception, Ctrl-C or
    SIGTERM), or call up()/down() yourself; down() is idempotent and leaves no process
    or container of this cluster behind.
    """

    name = "?"

    def __init__(
        self,
        workers: int,
        cores_per_worker: int,
        work_dir: Path,
        *,
        master_host: str = MASTER_HOST,
        master_port: int = MASTER_PORT,
        web_port: int = WEB_PORT,
        worker_memory: str = "2g",
        executor_memory: str = "1g",
        mounts: list[Path] | tuple[Path, ...] = (),
        clock_control: bool = False,
        clock_skip_java: bool = True,
        start_timeout_s: float = START_TIMEOUT_S,
        cluster_id: str | None = None,
        owned: bool = True,
    ) -> None:
        if workers < 1 or cores_per_worker < 1:
            raise ClusterError("a cluster needs at least 1 worker with at least 1 core")
        self.workers = workers
        self.cores_per_worker = cores_per_worker
        self.work_dir = Path(work_dir).resolve()
        self.master_host = master_host
        self.master_port = master_port
        self.web_port = web_port
        self.worker_memory = worker_memory
        self.executor_memory = executor_memory
        self.mounts = [Path(m).resolve() for m in mounts]
        self.clock_control = clock_control
        self.clock_skip_java = clock_skip_java
        self.start_timeout_s = start_timeout_s
        self.cluster_id = (
            cluster_id or f"{self.name}-{time.strftime('%Y%m%d%H%M%S')}-" + (uuid.uuid4().hex[:6])
        )
        self.owned = owned  # started by this process (a run) rather than by hand (the CLI)
        # Spark's RPC authentication: without the secret, no local process can register
        # an application (run code) on this cluster's loopback ports.
        self.secret = secrets.token_hex(24)
        self.info: ClusterInfo | None = None
        self._lock = threading.RLock()
        self._old_handlers: dict[int, Any] = {}

    # --- the interface ---------------------------------------------------------------
    def up(self) -> ClusterInfo:
        """Start the master and every worker; return once every worker has registered
        with the master (or raise ClusterError naming what did not start, after tearing
        down what did)."""
        with self._lock:
            if self.info is not None:
                return self.info
            self._check_ports()
            self._prepare_dirs()  # before the preflight: an image build logs into log_dir
            self._preflight()
            info = self._new_info()
            self.info = info
            try:
                self._start_master(info)
                for n in range(1, self.workers + 1):
                    info.workers.append(self._start_worker(n))
                self.wait_for_workers()
            except BaseException:
                self.down()
                raise
            return info

    @abstractmethod
    def _preflight(self) -> None:
        """Check what the backend needs before anything starts (Spark, the image)."""

    @abstractmethod
    def _start_master(self, info: ClusterInfo) -> None:
        """Start the master and record it in `info`."""

    @abstractmethod
    def down(self) -> None:
        """Stop and remove everything this cluster started. Idempotent."""

    @abstractmethod
    def kill_worker(self, n: int) -> None:
        """Hard kill worker n: the worker, its executor and the executor's Python
        processes die at once (SIGKILL), as when a machine fails."""

    @abstractmethod
    def pause_worker(self, n: int) -> None:
        """Freeze worker n and everything under it (SIGSTOP / docker pause)."""

    @abstractmethod
    def resume_worker(self, n: int) -> None:
        """Undo pause_worker(n)."""

    @abstractmethod
    def _start_worker(self, n: int) -> WorkerInfo:
        """Start worker n (not waiting for its registration)."""

    @abstractmethod
    def _worker_status(self, w: WorkerInfo) -> dict[str, Any]:
        """What the OS / docker engine says about worker w."""

    @abstractmethod
    def _master_alive(self) -> bool: ...

    def restart_worker(self, n: int, clock_offset_ms: float | None = None) -> WorkerInfo:
        """Kill worker n if it still runs, start it again on the same address and wait
        until it has registered. clock_offset_ms: its clock's offset (libfaketime);
        needs clock_control, or gives the new worker libfaketime when given."""
        with self._lock:
            info = self.require_info()
            old = info.worker(n)
            if old.state != "killed":
                self.kill_worker(n)
            if clock_offset_ms is not None:
                self._set_clock_file(n, clock_offset_ms)
            new = self._start_worker(n)
            info.workers[info.workers.index(old)] = new
        self.wait_for_workers()
        return new

    def set_worker_clock(self, n: int, offset_ms: float) -> None:
        """Move worker n's wall clock (and its executor's and Python workers') by offset_ms
        from real time; takes effect within about a second. Needs clock_control=True (all
        workers run under libfaketime, offset 0 until set)."""
        with self._lock:
            w = self.require_info().worker(n)
            if w.clock_offset_ms is None:
                raise ClusterError(
                    f"worker:{n} does not run under libfaketime: start the cluster with "
                    f"clock_control=True, or restart_worker({n}, clock_offset_ms=...)"
                )
            self._set_clock_file(n, offset_ms)
            w.clock_offset_ms = offset_ms

    def status(self) -> dict[str, Any]:
        """The cluster as the master and the OS / docker engine see it."""
        state = self._master_state()
        alive = alive_worker_hosts(state)
        info = self.info
        workers = []
        for w in info.workers if info else []:
            workers.append({**vars(w), "registered": w.host in alive, **self._worker_status(w)})
        return {
            "backend": self.name,
            "cluster_id": self.cluster_id,
            "master_url": self.master_url,
            "web_url": self.web_url,
            "master": "ALIVE" if state and state.get("status") == "ALIVE" else "DOWN",
            "master_process": self._master_alive() if info else False,
            "alive_workers": len(alive),
            "workers": workers,
            "work_dir": str(self.work_dir),
        }

    def wait_for_workers(self, timeout_s: float | None = None) -> None:
        """Wait until every worker that is not killed is ALIVE at the master."""
        timeout_s = self.start_timeout_s if timeout_s is None else timeout_s
        info = self.require_info()
        deadline = time.monotonic() + timeout_s
        want = sorted(w.host for w in info.workers if w.state != "killed")
        alive: list[str] = []
        while time.monotonic() < deadline:
            if not self._master_alive():
                raise ClusterError(f"the Spark master exited; see {self._master_log()}")
            for w in info.workers:
                if w.state != "killed" and not self._worker_status(w).get("alive", True):
                    raise ClusterError(
                        f"worker:{w.index} ({w.host}) exited during start-up; see "
                        f"{self._worker_log(w.index)}:\n{tail(self._worker_log(w.index))}"
                    )
            alive = alive_worker_hosts(self._master_state())
            if all(h in alive for h in want):
                return
            time.sleep(0.5)
        raise ClusterError(
            f"{self.name} cluster: only {len(set(alive) & set(want))} of {len(want)} workers "
            f"registered with {self.master_url} within {timeout_s:.0f}s (alive: {alive}); "
            f"logs in {self.log_dir}"
        )

    def _master_state(self) -> dict[str, Any] | None:
        """The master's JSON status page (None while it does not answer)."""
        return master_json(self.web_url)

    def require_info(self) -> ClusterInfo:
        """The up cluster's description; ClusterError if it is not up."""
        if self.info is None:
            raise ClusterError(f"the {self.name} cluster is not up")
        return self.info

    def _new_info(self) -> ClusterInfo:
        return ClusterInfo(
            backend=self.name,
            cluster_id=self.cluster_id,
            master_url=self.master_url,
            web_url=self.web_url,
            work_dir=str(self.work_dir),
            workers=[],
            owner_pid=os.getpid() if self.owned else None,
            spark_conf=self.spark_conf(),
            driver_env=self.driver_env(),
            mounts=[str(m) for m in self.mounts],
            cores_per_worker=self.cores_per_worker,
        )

    def executor_python(self) -> str:
        raise NotImplementedError

    @classmethod
    def attach(cls, info: ClusterInfo, **kwargs: Any) -> ClusterBackend:
        """A backend for a cluster that was started elsewhere (the CLI's state file), so
        that status(), the worker faults and down() work on it."""
        master_host, master_port = info.master_url.split("//", 1)[1].rsplit(":", 1)
        backend = cls(
            len(info.workers),
            info.cores_per_worker,
            Path(info.work_dir),
            master_host=master_host,
            master_port=int(master_port),
            web_port=int(info.web_url.rsplit(":", 1)[1]),
            mounts=[Path(m) for m in info.mounts],
            cluster_id=info.cluster_id,
            owned=info.owner_pid is not None,
            **kwargs,
        )
        backend.secret = info.spark_conf.get("spark.authenticate.secret", backend.secret)
        backend.info = info
        return backend

    def spark_conf(self) -> dict[str, str]:
        return {
            "spark.authenticate": "true",
            "spark.authenticate.secret": self.secret,
            "spark.pyspark.python": self.executor_python(),
            "spark.executor.memory": self.executor_memory,
            "spark.executor.cores": str(self.cores_per_worker),
            "spark.cores.max": str(self.cores_per_worker * self.workers),
        }

    def driver_env(self) -> dict[str, str]:
        return {"PYSPARK_PYTHON": self.executor_python()}

    # --- context manager: teardown on exceptions, Ctrl-C and SIGTERM -------------------
    def __enter__(self) -> ClusterBackend:
        self._install_signal_handlers()
        try:
            self.up()
        except BaseException:
            self.down()
            self._restore_signal_handlers()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.down()
        finally:
            self._restore_signal_handlers()

    def _install_signal_handlers(self) -> None:
        # SIGINT already raises KeyboardInterrupt; SIGTERM and SIGHUP would kill this
        # process without running any finally block, so they raise SystemExit instead.
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in (signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(ValueError, OSError):
                self._old_handlers[sig] = signal.signal(sig, _raise_exit)

    def _restore_signal_handlers(self) -> None:
        for sig, handler in self._old_handlers.items():
            with contextlib.suppress(ValueError, OSError, TypeError):
                signal.signal(sig, handler)
        self._old_handlers.clear()


def _raise_exit(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)
