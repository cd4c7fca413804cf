"""One scenario run on Apache Hudi's own Spark writer (DESIGN.md "Systems under test").

The runner lands the scenario's events at its rate, Hudi's streaming sink writes them in
a Spark runtime of its own (harness/systems/hudi/runtime.py), and the runner watches the
table's timeline on its monotonic clock. A driver crash fires at one of Hudi's commit
seams as seen from outside its JVM (harness/systems/hudi/seams.py): the whole driver
process group is SIGKILLed and a new driver resumes from the same Spark checkpoint. Once
the run's time is up the driver stops, Hudi's own reader reads the table back, and the
checks judge it from Spark's checkpoint and the watched timeline, never from what Hudi
says of itself (harness/systems/hudi/judge.py).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.faults.evidence import record_fault
from harness.faults.schedule import Occurrence
from harness.history import HistoryWriter, append_series
from harness.history_events import Kind
from harness.pipeline.rates import rate_law
from harness.runner.driver_config import fault_occurrences
from harness.runner.errors import RunError
from harness.runner.interrupt import Interrupted, as_interrupted, signals_held
from harness.runner.rundir import RunOutcome, RunPaths, new_run_paths
from harness.scenario import Scenario
from harness.systems.hudi.commits import Anchor
from harness.systems.hudi.driver_process import DriverProcess, stream_config
from harness.systems.hudi.landing import Lander, event_spec
from harness.systems.hudi.runtime import RuntimeUnavailable, SparkRuntime, ensure_runtime
from harness.systems.hudi.seams import KillBetweenCommits, KillMidCommit
from harness.systems.hudi.timeline_watch import SeenInstant, TimelineWatch

START_TIMEOUT_S = 180.0  # a driver's JVM, the Hudi bundle's classes, the first query plan
STOP_TIMEOUT_S = 120.0
SETTLE_LIMIT_S = 120.0  # past its duration, a run waits at most this long for a crash seam
WATCH_INTERVAL_S = 0.005  # Hudi's commit and Spark's are ~100 ms apart: poll well inside


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
    config: dict[str, Any] = field(default_factory=dict)
    drivers: list[DriverProcess] = field(default_factory=list)
    pending: list[Occurrence[Any]] = field(default_factory=list)
    seam: KillBetweenCommits | KillMidCommit | None = None
    armed: Occurrence[Any] | None = None
    t0: float = 0.0
    anchor: Anchor = field(default_factory=lambda: Anchor(time.time(), time.monotonic()))

    @property
    def driver(self) -> DriverProcess:
        return self.drivers[-1]

    @property
    def identifier(self) -> str:
        return str(self.config["identifier"])

    def start_driver(self) -> None:
        name = f"driver-{len(self.drivers)}"
        driver = DriverProcess(self.runtime, self.config, self.paths.logs, name)
        self.drivers.append(driver)
        line = driver.wait_for(("started", "failed"), START_TIMEOUT_S)
        if line is None or line.get("event") != "started":
            tail = "\n".join(driver.log_path.read_text().splitlines()[-5:])
            raise RunError(f"Hudi's stream driver did not start; see {driver.log_path}: {tail}")
        self.history.record(Kind.DRIVER_START, pid=driver.process.pid, restored_batch=None)

    def on_new(self, new: list[SeenInstant]) -> None:
        """The timeline watch's callback: the armed seam decides whether to kill now."""
        seam = self.seam
        if seam is not None:
            seam(new)

    def arm_due(self, elapsed: float) -> None:
        if self.seam is not None or not self.pending or self.pending[0].at_s > elapsed:
            return
        self.armed = self.pending.pop(0)
        point = getattr(self.armed.fault, "point", "after_commit")
        kind = KillMidCommit if point == "mid_commit" else KillBetweenCommits
        self.seam = kind(
            self.driver.signal_kill,
            self.config["checkpoint_dir"],
            self.config["table_path"],
            self.identifier,
            actions=data_actions(self.scenario),
            window_for_s=SETTLE_LIMIT_S,
        )
        self.seam.arm()

    def restart_if_killed(self) -> None:
        """Once the armed seam fired: reap the group, record the fault with what was seen,
        and start the next driver on the same checkpoint."""
        if self.seam is None or self.armed is None or self.seam.wait(0) is None:
            return
        killed = self.driver
        killed.kill()
        evidence = self.seam.settle()
        code = killed.process.returncode
        self.history.record(Kind.DRIVER_EXIT, pid=killed.process.pid, code=code)
        # Applied only once its effect was seen: the group died (SIGKILL) and, read after
        # its death, the table and Spark's checkpoint show the seam's window.
        if evidence is not None and code == -9 and evidence.in_window:
            proof = {**evidence.to_dict(), "exit_code": code, "point": self._point()}
            record_fault(self.history, self.armed, time.time() - self.t0, **proof)
        self.seam, self.armed = None, None
        self.start_driver()

    def check_alive(self) -> None:
        """A driver that exited by itself (Hudi's sink calls System.exit after its last
        failed retry) ends the run now, unknown, instead of at its stop."""
        code = self.driver.process.poll()
        killed_by_seam = code == -9 and self.seam is not None  # its evidence follows
        if code is not None and not killed_by_seam:
            raise RunError(
                f"Hudi's stream driver exited by itself with {code} mid-run; "
                f"see {self.driver.log_path}"
            )

    def _point(self) -> str:
        return str(getattr(self.armed.fault, "point", "")) if self.armed else ""


def _sample(run: HudiRun, lander: Lander, elapsed: float) -> None:
    rows = sum(int(b.get("rows", 0)) for d in run.drivers for b in d.events("batch"))
    append_series(
        run.paths.history,
        {
            "t": time.time(),
            "elapsed_s": elapsed,
            "source_offset": lander.offsets_landed(),
            "rows_committed_total": rows,
            "active_faults": [
                o.label for o in fault_occurrences(run.scenario) if o.active(elapsed)
            ],
        },
    )


def stream(run: HudiRun, lander: Lander, watch: TimelineWatch) -> None:
    """Start the driver and the feed, fire the faults, and run until the time is up and
    every crash has fired (or the settle limit passed)."""
    run.start_driver()
    run.t0 = time.time()
    run.anchor = Anchor(run.t0, time.monotonic())
    run.history.record(
        Kind.RUN_START,
        t=run.t0,
        run_id=run.paths.root.name,
        scenario=run.scenario.name,
        warmup_s=run.scenario.warmup_s,
        duration_s=run.scenario.duration_s,
        checkpoint_interval_s=run.scenario.engine.checkpoint_interval_s,
    )
    lander.start()
    watch.start()
    run_s, next_sample = run.scenario.run_s, 1.0
    while (elapsed := time.time() - run.t0) < run_s or (
        (run.pending or run.seam is not None) and elapsed < run_s + SETTLE_LIMIT_S
    ):
        run.arm_due(elapsed)
        run.restart_if_killed()
        run.check_alive()
        if elapsed >= next_sample:
            _sample(run, lander, elapsed)
            next_sample += 1.0
        if watch.error is not None:
            raise RunError(f"the timeline watch failed: {watch.error}")
        time.sleep(0.05)


def driver_config(scenario: Scenario, paths: RunPaths, runtime: SparkRuntime) -> dict[str, Any]:
    writers = scenario.engine.writers
    config = stream_config(
        runtime,
        event_spec(scenario),
        paths.root,
        table_type=scenario.table.type,
        trigger_s=scenario.engine.checkpoint_interval_s,
        master=f"local[{writers},4]",  # 4 attempts: a killed task is retried
        identifier=f"instantbench-{scenario.name}",
        extra={"table_path": str(paths.table), "spark_conf": dict(scenario.cluster.spark_conf)},
    )
    (paths.control / "hudi-driver.json").write_text(json.dumps(config, indent=1))
    return config


def landing_dir(config: dict[str, Any]) -> Path:
    return Path(config["landing_dir"])


def _stop_all(run: HudiRun, lander: Lander, watch: TimelineWatch, timeout_s: float) -> int | None:
    """Stop the feed, the driver (cleanly, or its group killed) and the watch."""
    lander.stop()
    code = run.driver.stop(timeout_s) if run.drivers else None
    for driver in run.drivers[:-1]:
        if driver.process.poll() is None:
            driver.kill()
    if code is not None:
        run.history.record(Kind.DRIVER_EXIT, pid=run.driver.process.pid, code=code)
    watch.stop()
    return code


def run_hudi(
    scenario: Scenario, out: Path, variant: str | None = None, quiet: bool = False
) -> RunOutcome:
    from harness.systems.hudi.analyse import analyse_hudi_run

    runtime = require_runtime(scenario)  # before anything starts
    paths = new_run_paths(scenario, out, variant)
    run = HudiRun(scenario, paths, runtime, HistoryWriter(paths.history, "runner"))
    run.config = driver_config(scenario, paths, runtime)
    run.pending = list(fault_occurrences(scenario))
    law = rate_law(scenario.source.rate.model_dump(mode="json"), scenario.run_s)
    lander = Lander(event_spec(scenario), law, landing_dir(run.config))
    watch = TimelineWatch(paths.table, interval_s=WATCH_INTERVAL_S, on_new=run.on_new)
    error: str | None = None
    interrupted: Interrupted | None = None
    try:
        stream(run, lander, watch)
    except RunError as exc:
        error = str(exc)
    except KeyboardInterrupt as exc:  # SIGINT or SIGTERM (harness.runner.interrupt)
        interrupted = as_interrupted(exc)
    finally:
        with signals_held() as held:
            code = _stop_all(run, lander, watch, 5 if interrupted else STOP_TIMEOUT_S)
            interrupted = interrupted or held.take()
    if interrupted is not None:
        error = f"interrupted by {interrupted.name}; partial results"
    elif error is None and code != 0:
        error = (
            f"Hudi's stream driver did not stop cleanly (exit {code}); see {run.driver.log_path}"
        )
    run.history.record(Kind.RUN_END, status="error" if error else "ok", error=error)
    result = analyse_hudi_run(
        scenario,
        paths,
        variant,
        error,
        runtime,
        watch.entries(),
        None if watch.error is None else str(watch.error),
        run.anchor,
        run.identifier,
    )
    paths.result.write_text(json.dumps(result, indent=2, default=str))
    if interrupted is not None:
        interrupted.run_dir = paths.root
        raise interrupted
    return RunOutcome(paths, result)
