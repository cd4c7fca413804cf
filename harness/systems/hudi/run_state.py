"""The processes and watchers of one Hudi run, and what happened to them: the stream's
drivers (a new one after each crash), the batch writers, the armed crash seam."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, NoReturn

from harness.faults.evidence import record_fault
from harness.faults.kinds import FaultKind
from harness.faults.schedule import Occurrence
from harness.faults.worker_faults import WorkerFaults
from harness.history import HistoryWriter
from harness.history_events import Kind
from harness.runner.errors import RunError
from harness.runner.progress import RunProgress
from harness.runner.rundir import RunPaths
from harness.scenario import Scenario
from harness.systems.hudi.driver_clock import ClockSteps
from harness.systems.hudi.driver_pause import DriverPause
from harness.systems.hudi.lock_pause import LockHolderPause
from harness.systems.hudi.runtime import ensure_runtime
from harness.systems.hudi.seams import KillBetweenCommits, KillMidCommit, KillMidRetry
from harness.systems.hudi.stream_config import DRIVER, hudi_exception
from harness.systems.hudi.task_crash import TaskCrashes, failed_batch, write_armed
from harness.systems.hudi.task_crash_stage import ARMED
from harness.systems.hudi.timeline_watch import SeenInstant
from harness.systems.spark_stream.anchor import Anchor
from harness.systems.spark_stream.batch_writers import BatchWriters
from harness.systems.spark_stream.driver_process import DriverProcess, start_stream_driver
from harness.systems.spark_stream.runtime_cache import RuntimeUnavailable, SparkRuntime

START_TIMEOUT_S = 180.0  # a driver's JVM, the Hudi bundle's classes, the first query plan
SETTLE_LIMIT_S = 120.0  # past its duration, a run waits at most this long for a crash seam
DEFAULT_TASK_ATTEMPTS = 4  # Spark's spark.task.maxFailures; local[N,4] asks for the same


def task_attempts(scenario: Scenario) -> int:
    """How many times Spark tries a task: the scenario's spark.task.maxFailures, which the
    local master is given too (local[N,F]), so a cluster and local mode count alike."""
    conf = scenario.cluster.spark_conf
    return int(conf.get("spark.task.maxFailures", DEFAULT_TASK_ATTEMPTS))


def require_runtime(scenario: Scenario) -> SparkRuntime:
    """Hudi's Spark runtime, fetched the first time; one line naming what is missing."""
    version = scenario.system.version or "1.2.0"
    try:
        return ensure_runtime(version)
    except RuntimeUnavailable as exc:
        raise RunError(f"{scenario.source_file}: system: {exc}") from None


def data_actions(scenario: Scenario) -> tuple[str, ...]:
    """The timeline action of the sink's writes: deltacommit on MOR, commit on COW."""
    return ("deltacommit",) if scenario.table.type == "mor" else ("commit",)


@dataclass
class HudiRun:
    """The processes and watchers of one run, and what happened to them."""

    scenario: Scenario
    paths: RunPaths
    runtime: SparkRuntime
    history: HistoryWriter
    variant: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    drivers: list[DriverProcess] = field(default_factory=list)
    writers: BatchWriters | None = None
    clock: ClockSteps | None = None  # clock_skew on the driver
    lock_pauses: list[LockHolderPause] = field(default_factory=list)
    pending: list[Occurrence[Any]] = field(default_factory=list)
    seam: KillBetweenCommits | KillMidCommit | KillMidRetry | None = None
    armed: Occurrence[Any] | None = None
    pausing: DriverPause | None = None  # the armed seam stops the driver instead
    paused: list[DriverPause] = field(default_factory=list)  # stopped, each with a successor
    task_crashes: TaskCrashes | None = None  # writer_crash: a task's Python worker killed
    worker_faults: WorkerFaults | None = None  # worker_kill, worker_pause (a cluster's)
    fired: set[str] = field(default_factory=set)  # labels of faults that fired once
    # Why the system under test failed by itself (a driver or writer exited, or would not
    # stop): the table it left is still judged.
    system_failure: str | None = None
    t0: float = 0.0
    progress: RunProgress | None = None
    rows_seen: int = 0  # rows committed at the last sample (the progress bar's rows/s)
    anchor: Anchor = field(default_factory=lambda: Anchor(time.time(), time.monotonic()))

    def mark_fired(self, label: str) -> bool:
        """True the first time `label` fires (a fault that fires once)."""
        first = label not in self.fired
        self.fired.add(label)
        return first

    @property
    def driver(self) -> DriverProcess:
        return self.drivers[-1]

    @property
    def identifier(self) -> str:
        return str(self.config["identifier"])

    def groups(self) -> dict[str, int]:
        """Each writer's process group (its leader's pid), by the label faults target."""
        groups = {"coordinator": self.driver.process.pid} if self.drivers else {}
        if self.writers is not None:
            for config, process in zip(self.writers.configs, self.writers.processes, strict=False):
                groups[str(config["writer"])] = process.process.pid
        return groups

    def start_driver(self) -> None:
        name = f"driver-{len(self.drivers)}"
        config, logs = self.config, self.paths.logs
        self.drivers.append(
            start_stream_driver(
                self.runtime, config, logs, name, DRIVER, "Hudi", self.history, START_TIMEOUT_S
            )
        )

    def on_new(self, new: list[SeenInstant]) -> None:
        """The timeline watch's callback: the armed seam decides whether to kill now, and
        a new instant may show the driver's skewed clock."""
        seam = self.seam
        if seam is not None:
            seam(new)
        if self.clock is not None:
            self.clock.seen(new, self.anchor.wall_of)

    def arm_due(self, elapsed: float) -> None:
        if self.seam is not None or not self.pending or self.pending[0].at_s > elapsed:
            return
        self.armed = self.pending.pop(0)
        action = self.driver.signal_kill
        if self.armed.kind == FaultKind.COORDINATOR_PAUSE:
            checkpoint = Path(self.config["checkpoint_dir"])
            self.pausing = DriverPause(self.armed, self.driver, checkpoint)
            action = self.pausing.stop_now
        where = (self.config["checkpoint_dir"], self.config["table_path"], self.identifier)
        options: dict[str, Any] = {
            "actions": data_actions(self.scenario),
            "window_for_s": SETTLE_LIMIT_S,
        }
        if self._point() == "mid_retry":  # fail a batch first: its retry is the seam
            folder, label = self._crash_folder(), self.armed.label
            write_armed(folder, label, partition=0, every_attempt=True)
            failed = partial(failed_batch, folder, label, task_attempts(self.scenario))
            self.seam = KillMidRetry(action, *where, failed=failed, **options)
        else:
            mid_commit = self.pausing is not None or self._point() == "mid_commit"
            kind = KillMidCommit if mid_commit else KillBetweenCommits
            self.seam = kind(action, *where, **options)
        self.seam.arm()

    def _crash_folder(self) -> Path:
        return Path(self.config["task_crash"]["dir"])

    def restart_if_killed(self, elapsed: float) -> None:
        """Once the armed seam fired: reap the group, record the fault with what was seen,
        and start the next driver on the same checkpoint (a paused driver: see _take_over)."""
        if self.seam is None or self.armed is None or self.seam.wait(0) is None:
            return
        if self.pausing is not None:
            self._take_over(self.pausing, elapsed)
            return
        killed = self.driver
        killed.kill()
        if isinstance(self.seam, KillMidRetry):  # the replay must not fail again
            (self._crash_folder() / ARMED).unlink(missing_ok=True)
        evidence = self.seam.settle()
        code = killed.process.returncode
        self.history.record(Kind.DRIVER_EXIT, pid=killed.process.pid, code=code)
        # Applied only once its effect was seen: the group died (SIGKILL) and, read after
        # its death, the table and Spark's checkpoint show the seam's window.
        if evidence is not None and code == -9 and evidence.in_window:
            proof = {**evidence.to_dict(), "exit_code": code, "point": self._point()}
            if isinstance(self.seam, KillMidRetry):  # how the batch was failed first
                proof["failed_batch"] = self.seam.failure
            record_fault(self.history, self.armed, time.time() - self.t0, **proof)
        self.seam, self.armed = None, None
        self.start_driver()

    def _take_over(self, pause: DriverPause, elapsed: float) -> None:
        """The driver stood still at its seam: a successor starts on the same checkpoint
        while it stands (if the stop missed the window, it just goes on)."""
        assert self.seam is not None
        in_window = pause.confirm(self.seam.settle(), elapsed)
        self.seam, self.armed, self.pausing = None, None, None
        if not in_window:
            pause.release()
            pause.resumed_s = elapsed
            return
        self.start_driver()
        pause.successor_pid = self.driver.process.pid
        self.paused.append(pause)

    def check_alive(self) -> None:
        """A driver or batch writer that exited by itself (Hudi's sink calls System.exit
        after its last failed retry) ends the run now, instead of at its stop."""
        code = self.driver.process.poll()
        killed_by_seam = code == -9 and self.seam is not None  # its evidence follows
        if code is not None and not killed_by_seam:
            self.failed(f"Hudi's stream driver exited by itself with {code} mid-run", self.driver)
        gone = self.writers.exited() if self.writers else None
        if gone is not None:
            code = gone.process.returncode
            self.failed(f"a Hudi batch writer exited by itself with {code} mid-run", gone)

    def failed(self, what: str, process: DriverProcess) -> NoReturn:
        """The system under test failed by itself: say why, with Hudi's own exception."""
        cause = hudi_exception(process.log_path)
        self.system_failure = f"{what}; see {process.log_path}" + (f": {cause}" if cause else "")
        raise RunError(self.system_failure)

    def unsettled(self) -> bool:
        """A crash still to fire, a lock holder's pause not over, a batch writer yet to
        commit or a clock skew no instant has shown yet: past its duration the run goes on
        for these (up to SETTLE_LIMIT_S), not for anything else."""
        if self.pending or self.seam is not None:
            return True
        if self.writers is not None and not self.writers.each_committed():
            return True
        if self.clock is not None and self.clock.unproven():
            return True
        parts = [*self.lock_pauses, *self.paused, self.task_crashes, self.worker_faults]
        return any(part is not None and part.unsettled() for part in parts)

    def _point(self) -> str:
        return str(getattr(self.armed.fault, "point", "")) if self.armed else ""
