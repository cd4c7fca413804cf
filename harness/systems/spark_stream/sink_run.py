"""One scenario run on a table format's own Spark sink (Delta, Iceberg: DESIGN.md
"Systems under test"), the format given as a SinkSystem.

The runner lands the scenario's events at its rate, the format's streaming sink writes
them (stream_driver.py), and the runner watches the format's commit log on its monotonic
clock (commit_watch.py). A driver crash fires between the format's commit and Spark's,
seen from outside the JVM (seams.py): the driver's process group is SIGKILLed and a new
driver resumes from the same Spark checkpoint. Once the run's time is up the driver
drains and stops, the format's own reader reads the table back, and the checks judge it
from Spark's checkpoint and the watched log (sink_analyse.py), never from what the
format says of itself.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.faults.evidence import record_fault
from harness.faults.kinds import FaultKind
from harness.faults.schedule import Occurrence
from harness.history import HistoryWriter, append_series
from harness.history_events import Kind
from harness.pipeline.events import SPARK_SCHEMA
from harness.pipeline.rates import rate_law
from harness.runner.driver_config import fault_occurrences
from harness.runner.errors import RunError
from harness.runner.interrupt import Interrupted, as_interrupted, signals_held
from harness.runner.progress import RunProgress
from harness.runner.rundir import RunOutcome, RunPaths, new_run_paths
from harness.scenario import Scenario
from harness.systems.spark_stream.anchor import Anchor, run_started
from harness.systems.spark_stream.batch_writers import BatchWriters, sink_writer_configs
from harness.systems.spark_stream.commit_watch import CommitWatch
from harness.systems.spark_stream.driver_process import DriverProcess, start_stream_driver
from harness.systems.spark_stream.landing import Lander, event_spec, land_opening_balances
from harness.systems.spark_stream.runtime_cache import RuntimeUnavailable, SparkRuntime
from harness.systems.spark_stream.seams import KillAfterCommit
from harness.systems.spark_stream.sink_analyse import analyse_sink_run
from harness.systems.spark_stream.sink_system import SinkSystem
from harness.systems.spark_stream.stop import stop_stream

DRIVER = Path(__file__).with_name("stream_driver.py")
WRITER = Path(__file__).with_name("batch_writer.py")
START_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 120.0
SETTLE_LIMIT_S = 120.0  # past its duration, a run waits at most this long for its crash
CATCH_UP_TRIGGERS = 4  # a restarted stream catches up in bounded batches (maxFilesPerTrigger)


@dataclass
class SinkRun:
    system: SinkSystem
    scenario: Scenario
    paths: RunPaths
    runtime: SparkRuntime
    history: HistoryWriter
    config: dict[str, Any]
    variant: str | None = None
    drivers: list[DriverProcess] = field(default_factory=list)
    pending: list[Occurrence[Any]] = field(default_factory=list)  # crashes not armed yet
    seam: KillAfterCommit | None = None
    armed: Occurrence[Any] | None = None
    system_failure: str | None = None
    t0: float = 0.0
    anchor: Anchor = field(default_factory=lambda: Anchor(time.time(), time.monotonic()))
    progress: RunProgress | None = None
    writers: BatchWriters | None = None

    @property
    def driver(self) -> DriverProcess:
        return self.drivers[-1]

    def start_driver(self) -> None:
        name, label = f"driver-{len(self.drivers)}", self.system.label
        self.drivers.append(
            start_stream_driver(
                self.runtime,
                self.config,
                self.paths.logs,
                name,
                DRIVER,
                label,
                self.history,
                START_TIMEOUT_S,
            )
        )

    def on_new(self, new: list[Any]) -> None:
        if self.seam is not None:
            self.seam(new)

    def step(self, elapsed: float) -> None:
        """Arm the next crash when due; once it fired, record it and start a new driver."""
        if self.seam is None and self.pending and self.pending[0].at_s <= elapsed:
            self.armed = self.pending.pop(0)
            self.seam = KillAfterCommit(self.driver.signal_kill, self.config["checkpoint_dir"])
        if self.seam is None or self.armed is None or self.seam.fired() is None:
            self._check_alive()
            return
        killed = self.driver
        killed.kill()
        evidence = self.seam.settle()
        code = killed.process.returncode
        self.history.record(Kind.DRIVER_EXIT, pid=killed.process.pid, code=code)
        # Applied only once its effect was seen: the group died of SIGKILL and, read after
        # its death, Spark's commit log still lacks the batch the table had committed.
        if evidence is not None and code == -9 and evidence.in_window:
            proof = {**evidence.to_dict(), "exit_code": code, "point": "after_commit"}
            record_fault(self.history, self.armed, time.time() - self.t0, **proof)
        self.seam, self.armed = None, None
        self.start_driver()

    def _check_alive(self) -> None:
        """A driver or batch writer that exited by itself ends the run now."""
        gone = self.writers.exited() if self.writers else None
        if self.driver.process.poll() is not None:
            gone, what = self.driver, f"{self.system.label}'s stream driver"
        elif gone is not None:
            what = f"a batch writer of {self.system.label}"
        else:
            return
        code = gone.process.returncode
        self.system_failure = f"{what} exited by itself with {code} mid-run; see {gone.log_path}"
        raise RunError(self.system_failure)

    def unsettled(self) -> bool:
        """A crash still to fire, or a batch writer yet to commit: past its duration the
        run goes on for these (up to SETTLE_LIMIT_S)."""
        if self.writers is not None and not self.writers.each_committed():
            return True
        return bool(self.pending) or self.seam is not None


def driver_config(
    system: SinkSystem, scenario: Scenario, paths: RunPaths, runtime: SparkRuntime
) -> dict[str, Any]:
    trigger_s = scenario.engine.checkpoint_interval_s
    table_sql = system.table_sql(paths.root)
    properties = ", ".join(f"'{k}' = '{v}'" for k, v in system.table_properties.items())
    config = {
        "format": system.format,
        "session": dict(system.session(paths.root)),
        "table_sql": table_sql,
        "create_sql": [
            *system.prepare_sql(paths.root),
            f"CREATE TABLE IF NOT EXISTS {table_sql} ({SPARK_SCHEMA}) USING {system.format}"
            + (f" TBLPROPERTIES ({properties})" if properties else ""),
        ],
        "txn_confs": system.txn_confs,
        "stream_by_name": system.stream_by_name,
        "master": f"local[{scenario.engine.writers},4]",  # a killed task gets 4 attempts
        "jars": list(runtime.jars),
        "landing_dir": str(paths.root / "landing"),
        "schema": SPARK_SCHEMA,
        "table_path": str(paths.table),
        "checkpoint_dir": str(paths.root / "checkpoint"),
        "mode": scenario.source.mode,
        "opening": land_opening_balances(scenario, paths.control),
        "record_key": "id",
        "identifier": f"instantbench-{scenario.name}",
        "trigger_s": trigger_s,
        "max_files_per_trigger": CATCH_UP_TRIGGERS * max(1, math.ceil(trigger_s)),
        "stop_file": str(paths.root / "STOP"),
        "spark_conf": dict(scenario.cluster.spark_conf),
    }
    (paths.control / f"{system.kind}-driver.json").write_text(json.dumps(config, indent=1))
    return config


def _sample(run: SinkRun, lander: Lander, elapsed: float) -> None:
    rows = sum(int(b.get("rows", 0)) for d in run.drivers for b in d.events("batch"))
    faults = [o.label for o in fault_occurrences(run.scenario) if o.active(elapsed)]
    append_series(
        run.paths.history,
        {
            "t": time.time(),
            "elapsed_s": elapsed,
            "source_offset": lander.offsets_landed(),
            "committed_offset": rows,  # landed offsets are rows
            "rows_committed_total": rows,
            "pending_instants": 0,  # a format's commit is one file: written whole, or not
            "active_faults": faults,
        },
    )
    if run.progress is not None:
        run.progress.update(elapsed, 0, 0, faults)


def stream(run: SinkRun, lander: Lander, watch: CommitWatch) -> None:
    if run.writers is not None:
        run.writers.launch()  # their JVMs start beside the driver's, then wait for the table
    run.start_driver()
    if run.writers is not None:
        run.writers.ready()
    run.anchor = run_started(run.history, run.scenario, run.paths.root.name)
    run.t0 = run.anchor.wall
    lander.start()
    watch.start()
    run_s, next_sample = run.scenario.run_s, 1.0
    while (elapsed := time.time() - run.t0) < run_s or (
        run.unsettled() and elapsed < run_s + SETTLE_LIMIT_S
    ):
        run.step(elapsed)
        if elapsed >= next_sample:
            _sample(run, lander, elapsed)
            next_sample += 1.0
        if watch.error is not None:
            raise RunError(f"the commit log watch failed: {watch.error}")
        time.sleep(0.05)


def _stop_all(run: SinkRun, lander: Lander, watch: CommitWatch, timeout_s: float) -> str | None:
    """Stop the feed, the writers and drivers (spark_stream/stop.py), then the watch; what
    did not stop cleanly."""
    lander.stop()
    problem = stop_stream(
        run.drivers, run.writers, run.history, timeout_s, run.system.label, run.paths.logs
    )
    watch.stop()
    run.system_failure = run.system_failure or problem
    return problem


def run_sink(
    system: SinkSystem,
    scenario: Scenario,
    out: Path,
    variant: str | None = None,
    quiet: bool = False,
) -> RunOutcome:
    try:  # before anything starts
        runtime = system.ensure_runtime(scenario.system.version or system.default_version)
    except RuntimeUnavailable as exc:
        raise RunError(f"{scenario.source_file}: system: {exc}") from None
    paths = new_run_paths(scenario, out, variant)
    run = SinkRun(
        system,
        scenario,
        paths,
        runtime,
        HistoryWriter(paths.history, "runner"),
        driver_config(system, scenario, paths, runtime),
        variant,
    )
    configs = sink_writer_configs(system, scenario, run.config, paths.control)
    if configs:
        run.writers = BatchWriters(runtime, configs, paths.logs, WRITER, system.label)
    crashes = [o for o in fault_occurrences(scenario) if o.kind == FaultKind.COORDINATOR_CRASH]
    run.pending = sorted(crashes, key=lambda o: o.at_s)
    law = rate_law(scenario.source.rate.model_dump(mode="json"), scenario.run_s)
    lander = Lander(event_spec(scenario), law, run.config["landing_dir"])
    watch = CommitWatch(system.log, paths.table, run.config["checkpoint_dir"], on_new=run.on_new)
    error: str | None = None
    interrupted: Interrupted | None = None
    with RunProgress(paths.root.name, scenario.run_s, quiet) as run.progress:
        try:
            stream(run, lander, watch)
        except RunError as exc:
            error = str(exc)
        except KeyboardInterrupt as exc:
            interrupted = as_interrupted(exc)
        finally:
            with signals_held() as held:
                run.progress.note("stopping...")
                problem = _stop_all(run, lander, watch, 5 if interrupted else STOP_TIMEOUT_S)
                interrupted = interrupted or held.take()
        if interrupted is not None:
            error = f"interrupted by {interrupted.name}; partial results"
        error = error or problem
        run.history.record(Kind.RUN_END, status="error" if error else "ok", error=error)
        result = analyse_sink_run(run, error, watch)
    paths.result.write_text(json.dumps(result, indent=2, default=str))
    if interrupted is not None:
        interrupted.run_dir = paths.root
        raise interrupted
    return RunOutcome(paths, result)
