"""Keeps the pipeline driver alive for the run: restarts it after a crash (the query
resumes from its checkpoint location), and applies the process-level faults."""

from __future__ import annotations

import json
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.faults.crash import record_coordinator_crashes
from harness.faults.evidence import record_fault
from harness.faults.fired import FiredLog, pause_reached, pause_resumed
from harness.faults.observe import wait_resumed, wait_stopped
from harness.faults.schedule import Occurrence, of_kind
from harness.faults.worker_faults import WorkerFaults
from harness.history import HistoryWriter
from harness.runner.driver_process import DriverProcess, reap_drivers
from harness.scenario.faults import CoordinatorCrash, CoordinatorPause
from infra.hosts.placement import LOOPBACK, Placement

MAX_RESTARTS = 10
ZOMBIE_GRACE_S = 8.0  # how long a resumed zombie driver runs before it is reaped


@dataclass(frozen=True)
class _Zombie:
    """A paused driver, its pause, when (elapsed s) it may resume, and what was seen when
    it was stopped (the fault's evidence once it resumed)."""

    process: DriverProcess
    pause: Occurrence[CoordinatorPause]
    resume_at: float
    paused_at: float
    seen: dict[str, Any]


class Supervisor:
    def __init__(
        self,
        config_path: Path,
        stop_file: Path,
        status_file: Path,
        logs: Path,
        history: HistoryWriter,
        occurrences: list[Occurrence[Any]],
        fired: FiredLog,
        cluster: Any = None,
        env: dict[str, str] | None = None,
        placement: Placement = LOOPBACK,
    ) -> None:
        self.config_path = config_path
        self.stop_file = stop_file
        self.status_file = status_file
        self.logs = logs
        self.history = history
        self.pauses = of_kind(occurrences, CoordinatorPause)
        self.crashes = of_kind(occurrences, CoordinatorCrash)
        # Worker faults act on a standalone or docker cluster (infra.cluster backend).
        self.worker_faults = WorkerFaults(cluster, occurrences, history, fired.mark)
        self.env = env or {}
        self.placement = placement  # the driver's host (every restart runs there too)
        self.fired = fired
        self.driver = self._new_driver()
        self.restarts = 0
        self.t0: float | None = None
        self._zombies: list[_Zombie] = []
        self._reaping: list[tuple[threading.Timer, DriverProcess]] = []  # resumed zombies

    def _new_driver(self) -> DriverProcess:
        n = getattr(self, "restarts", 0)
        log = self.logs / f"driver-{n}.log"
        return DriverProcess(self.config_path, log, self.env, self.placement)

    def start(self) -> None:
        self.driver.start()

    def tick(self) -> None:
        """Called about every 50 ms: restart a dead driver, start and end pauses."""
        code = self.driver.exit_code()
        if code is not None:
            self.driver.kill_group()
            if self.restarts >= MAX_RESTARTS:
                raise RuntimeError(f"the pipeline driver died {self.restarts + 1} times")
            self.history.record("driver_exit", pid=self.driver.pid, code=code)
            self._driver_exited(code)
            self.restarts += 1
            self.driver = self._new_driver()
            pid = self.driver.start()
            self.history.record("driver_restart", pid=pid, restarts=self.restarts)
        if self.t0 is None:
            return
        elapsed = time.time() - self.t0
        for pause in self.pauses:
            if self._pause_due(pause, elapsed) and self.fired.mark(pause.label):
                self._pause(pause, elapsed)
        self.worker_faults.step(elapsed)
        for zombie in list(self._zombies):
            # Resume the zombie only once its successor has recovered and committed: the
            # point is a stale coordinator acting after the new one took over.
            if elapsed >= zombie.resume_at and self._successor_committed():
                self._zombies.remove(zombie)
                self._resume_then_reap(zombie)

    def settling(self) -> bool:
        """A paused driver still waits for its successor's first commit, or a resumed one is
        within its grace. The run goes on until then: what a stale coordinator does must not
        depend on how fast its successor's JVM started (on a loaded machine that can take
        longer than the whole run)."""
        return bool(self._zombies) or any(timer.is_alive() for timer, _ in self._reaping)

    def _driver_exited(self, code: int | None) -> None:
        elapsed = time.time() - self.t0 if self.t0 is not None else 0.0
        record_coordinator_crashes(
            self.crashes, self.fired, self.history, elapsed, self.driver.pid, code
        )

    def _pause_due(self, o: Occurrence[CoordinatorPause], elapsed: float) -> bool:
        """At at_s; with a `point`, once the driver says it reached that seam."""
        if o.fault.point:
            return self.fired.fired(pause_reached(o.label))
        return o.at_s <= elapsed

    def _successor_committed(self) -> bool:
        try:
            status = json.loads(self.status_file.read_text())
        except (OSError, ValueError):
            return False
        return status.get("pid") == self.driver.pid and status.get("rows_committed", 0) > 0

    def _pause(self, o: Occurrence[CoordinatorPause], elapsed: float) -> None:
        """SIGSTOP the driver, start a new one that recovers: the old one is a zombie."""
        old = self.driver
        old_pid = old.signal_group(signal.SIGSTOP)
        state = wait_stopped(old_pid)
        self.restarts += 1
        self.driver = self._new_driver()
        pid = self.driver.start()
        point = {"point": o.fault.point} if o.fault.point else {}
        seen = {"paused_pid": old_pid, "new_pid": pid, "state": state, **point}
        self._zombies.append(_Zombie(old, o, elapsed + o.fault.duration_s, elapsed, seen))

    def _resume_then_reap(self, zombie: _Zombie) -> None:
        """SIGCONT the zombie; the pause counts as applied only now (a stale coordinator
        running after its successor committed is what it tests), and only if the old
        driver had shown as stopped and now runs again."""
        o = zombie.pause
        self.fired.mark(pause_resumed(o.label))  # a driver held at a seam goes on
        pid = zombie.process.signal_group(signal.SIGCONT)
        self.history.record("driver_resumed", pid=pid, label=o.label)
        resumed = wait_resumed(pid)
        if zombie.seen["state"] is not None and resumed is not None:
            elapsed = time.time() - self.t0 if self.t0 is not None else zombie.paused_at
            evidence = {**zombie.seen, "resumed_state": resumed, "resumed_s": round(elapsed, 3)}
            record_fault(self.history, o, zombie.paused_at, **evidence)
        timer = threading.Timer(ZOMBIE_GRACE_S, zombie.process.kill)
        timer.start()
        self._reaping.append((timer, zombie.process))

    def stop(self, timeout_s: float, hurry: Callable[[], bool] = lambda: False) -> int | None:
        """Ask the live driver to stop (SIGKILL after timeout_s, or once `hurry()`); reap
        every process it or a zombie left."""
        self.stop_file.touch()
        code = self.driver.wait(timeout_s, hurry)
        if code is None:
            self.driver.kill()
        else:
            self._driver_exited(code)  # a crash fault may have hit it while stopping
        self.driver.kill_group()
        for timer, resumed in self._reaping:
            timer.cancel()
            resumed.kill()
        for paused in self._zombies:
            paused.process.kill()
        reap_drivers(self.logs)  # a driver lost track of (a signal mid-restart or mid-pause)
        return code
