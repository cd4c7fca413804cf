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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.faults.kinds import FaultKind
from harness.faults.worker_faults import WorkerFaults
from harness.history import HistoryWriter, append_series
from harness.history_events import Kind
from harness.pipeline.rates import rate_law
from harness.runner.cluster_setup import start_cluster
from harness.runner.driver_config import fault_occurrences
from harness.runner.errors import RunError
from harness.runner.interrupt import Interrupted, as_interrupted, signals_held
from harness.runner.lock_setup import RunLock, lock_environment_of, start_run_lock
from harness.runner.progress import RunProgress
from harness.runner.rundir import RunOutcome, RunPaths, new_run_paths
from harness.scenario import Scenario
from harness.systems.hudi.analyse import analyse_hudi_run
from harness.systems.hudi.batch_writers import WRITER, writer_configs
from harness.systems.hudi.driver_clock import ClockSteps, ClockUnavailable, DriverClock, step_of
from harness.systems.hudi.lock_holder import LockHolders
from harness.systems.hudi.lock_options import ZOOKEEPER_BASE_PATH, occ_options
from harness.systems.hudi.lock_pause import LockHolderPause
from harness.systems.hudi.run_state import (
    SETTLE_LIMIT_S,
    HudiRun,
    data_actions,
    require_runtime,
    task_attempts,
)
from harness.systems.hudi.stream_config import TABLE_NAME, hudi_exception, stream_config
from harness.systems.hudi.task_crash import TaskCrashes, crash_spec
from harness.systems.hudi.timeline_watch import TimelineWatch
from harness.systems.spark_stream.anchor import run_started
from harness.systems.spark_stream.batch_writers import BatchWriters
from harness.systems.spark_stream.landing import Lander, event_spec
from harness.systems.spark_stream.runtime_cache import SparkRuntime
from harness.systems.spark_stream.stop import stop_stream

if TYPE_CHECKING:
    from infra.cluster import ClusterBackend, ClusterInfo

STOP_TIMEOUT_S = 120.0
# engine.safety.occ false: no writer checks for conflicts or takes a lock, so the harness
# can show it catches what OCC prevents. Failed writes are still cleaned lazily: a single
# writer's eager rollback would take the other writers' inflight commits for its own.
UNSAFE_WRITERS = {
    "hoodie.write.concurrency.mode": "SINGLE_WRITER",
    "hoodie.cleaner.policy.failed.writes": "LAZY",
}
WATCH_INTERVAL_S = 0.005  # Hudi's commit and Spark's are ~100 ms apart: poll well inside


def _pending(watch: TimelineWatch) -> int:
    """Instants on the timeline that have not completed (yet)."""
    states: dict[str, bool] = {}
    for entry in watch.entries():
        states[entry.requested] = states.get(entry.requested, False) or entry.completed is not None
    return sum(1 for done in states.values() if not done)


def _sample(run: HudiRun, lander: Lander, watch: TimelineWatch, elapsed: float) -> None:
    """One second of the series: rows landed and committed (their difference is the
    backlog `capacity` judges), instants not completed yet, the faults active."""
    rows = sum(int(b.get("rows", 0)) for d in run.drivers for b in d.events("batch"))
    faults = [o.label for o in fault_occurrences(run.scenario) if o.active(elapsed)]
    pending = _pending(watch)
    append_series(
        run.paths.history,
        {
            "t": time.time(),
            "elapsed_s": elapsed,
            "source_offset": lander.offsets_landed(),
            # Landed offsets are rows, so the rows Spark committed are its committed offset.
            "committed_offset": rows,
            "rows_committed_total": rows,
            "pending_instants": pending,
            "active_faults": faults,
        },
    )
    if run.progress is not None:
        run.progress.update(elapsed, max(rows - run.rows_seen, 0), pending, faults)
    run.rows_seen = rows


def stream(run: HudiRun, lander: Lander, watch: TimelineWatch) -> None:
    """Start the batch writers (the bank's accounts first), the driver and the feed, fire
    the faults, and run until the time is up and every crash has fired (or the settle
    limit passed)."""
    if run.writers is not None:
        run.writers.launch()  # their JVMs start beside the driver's
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
        if run.clock is not None:
            run.clock.move(elapsed)
        for pause in run.lock_pauses:
            pause.step(elapsed)
        run.arm_due(elapsed)
        if run.worker_faults is not None:
            run.worker_faults.step(elapsed)
        if run.task_crashes is not None:
            run.task_crashes.step(elapsed, run.t0, run.history)
        run.restart_if_killed(elapsed)
        for paused in run.paused:
            paused.step(elapsed, run.history)
        run.check_alive()
        if elapsed >= next_sample:
            _sample(run, lander, watch, elapsed)
            next_sample += 1.0
        if watch.error is not None:
            raise RunError(f"the timeline watch failed: {watch.error}")
        time.sleep(0.05)


def _fails_a_task(fault: Any) -> bool:
    """A writer crash, or a driver crash mid_retry (it fails a batch by its tasks first)."""
    mid_retry = fault.kind == FaultKind.COORDINATOR_CRASH and fault.point == "mid_retry"
    return bool(fault.kind == FaultKind.WRITER_CRASH or mid_retry)


def driver_config(
    scenario: Scenario,
    paths: RunPaths,
    runtime: SparkRuntime,
    lock: RunLock | None,
    cluster: ClusterInfo | None = None,
) -> dict[str, Any]:
    writers, attempts = scenario.engine.writers, task_attempts(scenario)
    extra: dict[str, Any] = {
        "table_path": str(paths.table),
        "spark_conf": dict(scenario.cluster.spark_conf),
    }
    if cluster is not None:  # the stream's executors on the cluster's workers (not the
        # batch writers': an application of the stream's holds every core of the cluster)
        extra["cluster_conf"] = dict(cluster.spark_conf)
        extra["jvm_env"] = dict(cluster.driver_env)  # the executors' python, by its name
    if lock is not None:  # more than one writer: OCC under the run's lock, unless off
        safe = scenario.engine.safety.occ
        extra["hudi_options"] = occ_options(lock.spec, TABLE_NAME) if safe else UNSAFE_WRITERS
    if any(_fails_a_task(f) for f in scenario.faults):  # the Python stage a crash needs
        actions = data_actions(scenario)
        extra["task_crash"] = crash_spec(paths.control, paths.table, actions, writers)
    config = stream_config(
        runtime,
        event_spec(scenario),
        paths.root,
        table_type=scenario.table.type,
        trigger_s=scenario.engine.checkpoint_interval_s,
        # 4 attempts: a killed task is retried (a cluster's default is 4 too)
        master=cluster.master_url if cluster is not None else f"local[{writers},{attempts}]",
        identifier=f"instantbench-{scenario.name}",
        extra=extra,
    )
    (paths.control / "hudi-driver.json").write_text(json.dumps(config, indent=1))
    return config


def landing_dir(config: dict[str, Any]) -> Path:
    return Path(config["landing_dir"])


def _stop_all(run: HudiRun, lander: Lander, watch: TimelineWatch, timeout_s: float) -> str | None:
    """Stop the feed, release what a fault holds stopped, stop the writers and drivers
    (cleanly, or their groups killed: spark_stream/stop.py) and the watch; what did not
    stop cleanly."""
    lander.stop()
    for paused in run.paused:
        paused.release()  # a driver still stopped would never stop
    for pause in run.lock_pauses:
        pause.release()  # nor would a writer
        pause.holders.close()
    problem = stop_stream(
        run.drivers, run.writers, run.history, timeout_s, "Hudi", run.paths.logs, hudi_exception
    )
    watch.stop()
    run.system_failure = run.system_failure or problem
    return problem


def _prepare(
    scenario: Scenario,
    paths: RunPaths,
    runtime: SparkRuntime,
    variant: str | None,
    cluster: ClusterBackend | None,
) -> tuple[HudiRun, RunLock | None]:
    """The run's state, its lock (with batch writers) and the processes' configs."""
    run = HudiRun(scenario, paths, runtime, HistoryWriter(paths.history, "runner"), variant)
    occurrences = list(fault_occurrences(scenario))
    if cluster is not None:
        run.worker_faults = WorkerFaults(cluster, occurrences, run.history, run.mark_fired)
    seams = (FaultKind.COORDINATOR_CRASH, FaultKind.COORDINATOR_PAUSE)
    run.pending = sorted((o for o in occurrences if o.kind in seams), key=lambda o: o.at_s)
    steps = [step_of(o) for o in occurrences if o.kind == FaultKind.CLOCK_SKEW]
    if steps:
        try:
            run.clock = ClockSteps(DriverClock(paths.control), steps, run.history)
        except ClockUnavailable as exc:
            raise RunError(f"{scenario.source_file}: faults: clock_skew: {exc}") from None
    lock = start_run_lock(scenario, paths) if scenario.batch_writers.count else None
    pauses = [o for o in occurrences if o.kind == FaultKind.BATCH_WRITER_PAUSE]
    if pauses and lock is not None:
        holders = LockHolders(str(lock.spec.endpoint), f"{ZOOKEEPER_BASE_PATH}/{TABLE_NAME}")
        run.lock_pauses = [
            LockHolderPause(o, holders, run.groups, run.history, lock.spec.lease_s, paths.table)
            for o in pauses
        ]
    info = cluster.require_info() if cluster is not None else None
    run.config = driver_config(scenario, paths, runtime, lock, info)
    crashes = [o for o in occurrences if o.kind == FaultKind.WRITER_CRASH]
    if crashes:
        run.task_crashes = TaskCrashes(crashes, run.config["task_crash"])
    if run.clock is not None:
        run.config.setdefault("jvm_env", {}).update(run.clock.clock.env())  # its JVM only
    configs = writer_configs(scenario, run.config, paths.control)
    run.writers = BatchWriters(runtime, configs, paths.logs, WRITER, "Hudi") if configs else None
    return run, lock


def run_hudi(
    scenario: Scenario, out: Path, variant: str | None = None, quiet: bool = False
) -> RunOutcome:
    runtime = require_runtime(scenario)  # before anything starts
    paths = new_run_paths(scenario, out, variant)
    # A cluster of the runtime's own Spark line: its daemons, executors and Python workers.
    cluster = start_cluster(scenario, paths, python=runtime.python, spark_home=runtime.spark_home)
    try:
        return _run_hudi(scenario, paths, runtime, variant, quiet, cluster)
    finally:
        if cluster is not None:
            with signals_held():  # a second Ctrl-C must not leave half the cluster running
                cluster.down()


def _run_hudi(
    scenario: Scenario,
    paths: RunPaths,
    runtime: SparkRuntime,
    variant: str | None,
    quiet: bool,
    cluster: ClusterBackend | None,
) -> RunOutcome:
    run, lock = _prepare(scenario, paths, runtime, variant, cluster)
    law = rate_law(scenario.source.rate.model_dump(mode="json"), scenario.run_s)
    lander = Lander(event_spec(scenario), law, landing_dir(run.config))
    watch = TimelineWatch(paths.table, interval_s=WATCH_INTERVAL_S, on_new=run.on_new)
    error: str | None = None
    interrupted: Interrupted | None = None
    with RunProgress(paths.root.name, scenario.run_s, quiet) as run.progress:
        try:
            stream(run, lander, watch)
        except RunError as exc:
            error = str(exc)
        except KeyboardInterrupt as exc:  # SIGINT or SIGTERM (harness.runner.interrupt)
            interrupted = as_interrupted(exc)
        finally:
            with signals_held() as held:
                run.progress.note("stopping...")
                problem = _stop_all(run, lander, watch, 5 if interrupted else STOP_TIMEOUT_S)
                if lock is not None:
                    lock.stop()
                interrupted = interrupted or held.take()
        if interrupted is not None:
            error = f"interrupted by {interrupted.name}; partial results"
        error = error or problem
        run.history.record(Kind.RUN_END, status="error" if error else "ok", error=error)
        result = analyse_hudi_run(
            run,
            error,
            watch.entries(),
            None if watch.error is None else str(watch.error),
            None if lock is None else lock_environment_of(lock.spec),
        )
    paths.result.write_text(json.dumps(result, indent=2, default=str))
    if interrupted is not None:
        interrupted.run_dir = paths.root
        raise interrupted
    return RunOutcome(paths, result)
