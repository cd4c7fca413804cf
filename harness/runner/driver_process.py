"""The pipeline driver as a supervised child process: start, watch, kill, pause, stop."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from infra.cluster.procs import pids_with_env, proc_env, signal_pids, wait_gone
from infra.hosts.placement import LOOPBACK, Placement

# Every process of one driver carries this marker (the JVM and the Python workers inherit
# it): PySpark's worker daemon puts itself in a process group of its own, and after the
# JVM died its workers are nobody's children, so neither the group nor the tree finds them.
DRIVER_ENV = "INSTANTBENCH_DRIVER"


def reap_drivers(logs: Path) -> list[int]:
    """Kill every process of every driver whose log is in `logs` (all drivers of one run,
    also one a restart or a pause lost track of); return their pids."""
    prefix = f"{logs}{os.sep}"
    marked = pids_with_env(DRIVER_ENV)
    pids = [p for p in marked if proc_env(p).get(DRIVER_ENV, "").startswith(prefix)]
    signal_pids(pids, signal.SIGKILL)
    wait_gone(pids, 5.0)
    return pids


class DriverProcess:
    command = (sys.executable, "-m", "harness.pipeline.driver")  # + the config path

    def __init__(
        self,
        config_path: Path,
        log_path: Path,
        env: dict[str, str] | None = None,
        placement: Placement = LOOPBACK,
    ):
        # `env`: a cluster backend's driver environment (e.g. the executors' Python).
        # `placement`: the driver's host (loopback unless the run has hosts).
        self.config_path = config_path
        self.log_path = log_path
        self.marker = str(log_path)  # one log per driver process of a run: unique
        self.launcher = placement.launcher
        self.env = {
            **os.environ,
            "SPARK_LOCAL_IP": placement.address,
            **(env or {}),
            DRIVER_ENV: self.marker,
        }
        self.proc: subprocess.Popen | None = None
        self.starts = 0

    def start(self) -> int:
        # Spark's noise goes to the log file, not to the terminal.
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [*self.launcher, *self.command, str(self.config_path)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self.env,
                start_new_session=True,  # its JVM and Python workers form one process group
            )
        self.starts += 1
        return self.proc.pid

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def signal_group(self, sig: signal.Signals) -> int:
        """Send `sig` to the started driver's process group (a pause, a resume); its pid."""
        if self.proc is None:
            raise RuntimeError(f"driver {self.marker} was never started")
        os.killpg(self.proc.pid, sig)
        return self.proc.pid

    def exit_code(self) -> int | None:
        return self.proc.poll() if self.proc else None

    def kill(self) -> None:
        """SIGKILL the driver and everything it started (a coordinator crash)."""
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.kill_group()

    def kill_group(self) -> None:
        """Reap leftovers (the JVM, Python workers) of a driver that already died: its
        process group and every process with its marker."""
        if self.proc:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            left = self.processes()
            signal_pids(left, signal.SIGKILL)
            wait_gone(left, 5.0)

    def processes(self) -> list[int]:
        """Live processes of this driver (it, its JVM, its Python workers)."""
        return pids_with_env(DRIVER_ENV, self.marker)

    def wait(self, timeout_s: float, hurry: Callable[[], bool] = lambda: False) -> int | None:
        """The exit code, or None after timeout_s or as soon as `hurry()` says so."""
        deadline = time.time() + timeout_s
        while time.time() < deadline and not hurry():
            code = self.exit_code()
            if code is not None:
                return code
            time.sleep(0.2)
        return self.exit_code()
