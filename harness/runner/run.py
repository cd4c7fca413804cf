"""One scenario run: set up the table, supervise the driver, sample, stop, analyse."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.clock import AdjustableClock
from engine.errors import EngineError
from harness.faults.fired import FiredLog
from harness.faults.network import NetworkFaults
from harness.faults.schedule import Occurrence, of_kind
from harness.faults.settle import unsettled
from harness.faults.skew import SkewApplier
from harness.faults.storage import StorageFaults
from harness.faults.writer_pause import install_writer_pauses
from harness.history import HistoryWriter, append_series
from harness.pipeline.config import COMMIT_REFUSED_EXIT, DriverConfig
from harness.pipeline.rates import RateLaw, rate_law
from harness.run_clock import RunClock
from harness.runner.analysis import analyse_run
from harness.runner.cluster_setup import start_cluster
from harness.runner.commit_count import CommitCount
from harness.runner.driver_config import driver_config, fault_occurrences
from harness.runner.environment import live_spark_ui
from harness.runner.errors import RunError
from harness.runner.hosts_setup import placement, run_hosts
from harness.runner.interrupt import Interrupted, as_interrupted, signals_held
from harness.runner.lock_setup import run_lock_spec, start_run_lock
from harness.runner.progress import RunProgress
from harness.runner.rundir import RunOutcome, RunPaths, new_run_paths
from harness.runner.supervisor import Supervisor
from harness.runner.table_setup import set_up_table
from harness.runner.table_store import TableStore
from harness.scenario import Scenario
from harness.scenario.faults import ClockSkew
from harness.workload.background import Background, start_background

if TYPE_CHECKING:
    from infra.cluster import ClusterBackend
    from infra.cluster.info import ClusterInfo
    from infra.hosts import HostNetwork
    from infra.hosts.placement import Placement

STARTUP_TIMEOUT_S = 180
STOP_TIMEOUT_S = 120
SETTLE_LIMIT_S = 180  # past its duration, a run waits at most this long for a paused driver
# or for a fault's effect (harness/faults/settle.py)
# After SIGINT / SIGTERM: how long the driver may take to stop on its own before it and
# its processes are killed (`docker stop` and CI time-outs kill everything after ~10 s).
INTERRUPT_STOP_S = 5


def _read_status(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _wait_for_t0(t0_file: Path, supervisor: Supervisor) -> float:
    deadline = time.time() + STARTUP_TIMEOUT_S
    while time.time() < deadline:
        if t0_file.exists():
            return float(t0_file.read_text())
        if supervisor.driver.exit_code() is not None:
            raise RunError(
                f"the pipeline driver exited with {supervisor.driver.exit_code()} during "
                f"start-up; see {supervisor.driver.log_path}"
            )
        time.sleep(0.1)
    raise RunError(f"the pipeline driver did not start its query within {STARTUP_TIMEOUT_S}s")


def _runner_skew(
    scenario: Scenario, background: Background, t0: float, history: HistoryWriter
) -> SkewApplier:
    """Clock skew of the batch writers (their clocks live in this process)."""
    clocks: dict[str, AdjustableClock] = {w.name_: w.clock for w in background.writers}
    skews = [
        o
        for o in of_kind(fault_occurrences(scenario), ClockSkew)
        if o.fault.target in clocks or o.fault.target == "all"
    ]
    return SkewApplier(skews, clocks, RunClock(t0=t0), history)


def _runner_storage_faults(cfg: DriverConfig, t0: float, history: HistoryWriter) -> StorageFaults:
    """Storage faults of the batch writers and readers (their tables live in this process)."""
    occurrences = [Occurrence.from_dict(o) for o in cfg.faults]
    return StorageFaults(
        occurrences, RunClock(t0=t0), history, FiredLog(cfg.fired_dir), cfg.storage_latency_ms
    )


def run_scenario(
    scenario: Scenario,
    out: Path,
    variant: str | None = None,
    quiet: bool = False,
    master: str | None = None,
) -> RunOutcome:
    if scenario.system.kind == "hudi":  # Apache Hudi's own writer, on its own Spark runtime
        from harness.systems.hudi.run import run_hudi

        return run_hudi(scenario, out, variant, quiet)
    if scenario.system.kind in ("delta", "iceberg"):  # a format's own Spark sink
        from harness.systems.registry import sink_system
        from harness.systems.spark_stream.sink_run import run_sink

        return run_sink(sink_system(scenario.system), scenario, out, variant, quiet)
    paths = new_run_paths(scenario, out, variant)
    with run_hosts(scenario, paths) as hosts:
        store = TableStore(scenario, paths, hosts)
        try:
            paths = dataclasses.replace(paths, location=store.start())
        except (OSError, RuntimeError) as exc:
            store.stop()
            raise RunError(
                f"{scenario.source_file}: table.storage: cannot reach the table's store ({exc})"
            ) from None
        try:
            return _run_in_store(scenario, paths, variant, quiet, master, store, hosts)
        finally:
            store.stop()


def _run_in_store(
    scenario: Scenario,
    paths: RunPaths,
    variant: str | None,
    quiet: bool,
    master: str | None,
    store: TableStore,
    hosts: HostNetwork | None,
) -> RunOutcome:
    # A ZooKeeper for the run: stopped below,
    run_lock = start_run_lock(scenario, paths, hosts)
    try:  # also when the table or the cluster cannot be set up
        try:
            set_up_table(scenario, paths)
        except (OSError, EngineError) as exc:  # table.path unusable, or a table is there
            raise RunError(
                f"{scenario.source_file}: table.path: cannot create the table at "
                f"{paths.table_location} ({exc}); allowed: a path where a new directory can "
                "be made"
            ) from None
        try:
            cluster = start_cluster(scenario, paths, **({"network": hosts} if hosts else {}))
        except KeyboardInterrupt as exc:  # up() tore down what it had started
            raise _partial(scenario, paths, variant, as_interrupted(exc), None) from None
        try:
            return _run(scenario, paths, variant, quiet, master, cluster, store, hosts)
        finally:
            if cluster is not None:
                with signals_held():  # a second Ctrl-C must not leave half the cluster running
                    cluster.down()
    finally:
        run_lock.stop()


def _driver_setup(
    scenario: Scenario,
    paths: RunPaths,
    master: str | None,
    info: ClusterInfo | None,
    store: TableStore,
    driver: Placement,
) -> tuple[DriverConfig, Path]:
    """The driver's config, saved where the driver reads it: a cluster's master and auth
    secret, an object store's credentials, the address of the driver's host."""
    cfg = driver_config(scenario, paths, paths.root.name, master, driver.address)
    if info is not None:
        cfg.spark_conf.update(info.spark_conf)  # carries the cluster's auth secret
    cfg.spark_conf.update(store.executor_env())  # an object store's credentials
    cfg_path = paths.control / "driver.json"
    cfg.save(cfg_path)
    return cfg, cfg_path


def _sample(
    status_file: Path,
    law: RateLaw,
    occurrences: Sequence[Occurrence[Any]],
    now: float,
    elapsed: float,
    last_rows: int,
) -> dict[str, Any]:
    """One second of the series, from the driver's status file."""
    status = _read_status(status_file)
    return {
        "t": now,
        "elapsed_s": elapsed,
        "source_offset": None if law.unbounded else law.available(elapsed),
        "committed_offset": status.get("committed_offset", 0),
        "pending_instants": status.get("pending_instants", 0),
        "rows_committed_total": int(status.get("rows_committed", last_rows)),
        "active_faults": [o.label for o in occurrences if o.active(elapsed)],
    }


def _run(
    scenario: Scenario,
    paths: RunPaths,
    variant: str | None,
    quiet: bool,
    master: str | None,
    cluster: ClusterBackend | None,
    store: TableStore,
    hosts: HostNetwork | None,
) -> RunOutcome:
    run_id = paths.root.name
    history = HistoryWriter(paths.history, "runner")
    info = cluster.require_info() if cluster is not None else None
    master_url = info.master_url if info else master
    driver = placement(hosts, "driver")
    cfg, cfg_path = _driver_setup(scenario, paths, master_url, info, store, driver)
    occurrences = fault_occurrences(scenario)
    fired = FiredLog(cfg.fired_dir)
    supervisor = Supervisor(
        cfg_path,
        Path(cfg.stop_file),
        Path(cfg.status_file),
        paths.logs,
        history,
        occurrences,
        fired,
        cluster=cluster,
        env=info.driver_env if info is not None else None,
        placement=driver,
    )
    law = rate_law(cfg.rate, scenario.run_s)
    error: str | None = None
    interrupted: Interrupted | None = None
    background = Background()
    appliers: list[SkewApplier | NetworkFaults] = []
    with RunProgress(run_id, scenario.run_s, quiet) as progress:
        try:
            supervisor.start()
            t0 = supervisor.t0 = _wait_for_t0(Path(cfg.t0_file), supervisor)
            if ui := live_spark_ui(paths.history):
                progress.print(f"Spark UI (while the run lasts): {ui}")
            _record_start(history, scenario, run_id, t0)
            background = start_background(
                scenario,
                paths.table_location,
                history,
                _runner_storage_faults(cfg, t0, history),
                run_lock_spec(paths),
            )
            appliers = _start_runner_faults(scenario, background, t0, history, fired, hosts)
            _drive(scenario, paths, supervisor, t0, occurrences, fired, law, progress)
        except (RunError, RuntimeError) as exc:
            error = str(exc)
        except KeyboardInterrupt as exc:  # SIGINT or SIGTERM (harness.runner.interrupt)
            interrupted = as_interrupted(exc)
        finally:
            code, interrupted = _stop(progress, appliers, background, supervisor, interrupted)
            if interrupted is None and error is None:
                error = stop_error(code, supervisor.driver.log_path)
    return _finish(
        scenario, paths, variant, store, history, supervisor, error, interrupted, progress
    )


def _start_runner_faults(
    scenario: Scenario,
    background: Background,
    t0: float,
    history: HistoryWriter,
    fired: FiredLog,
    hosts: HostNetwork | None,
) -> list[SkewApplier | NetworkFaults]:
    """The faults this process applies: the batch writers' clocks and pauses, and the
    links between the run's hosts; what must be stopped at the end."""
    occurrences = fault_occurrences(scenario)
    skew = _runner_skew(scenario, background, t0, history)
    skew.start()
    install_writer_pauses(occurrences, background.writers, RunClock(t0=t0), history)
    if hosts is None:
        return [skew]
    network = NetworkFaults(hosts, occurrences, RunClock(t0=t0), history, fired)
    network.start()
    return [network, skew]  # healed first: the driver's stop must reach its executors


def _record_start(history: HistoryWriter, scenario: Scenario, run_id: str, t0: float) -> None:
    history.record(
        "run_start",
        t=t0,
        run_id=run_id,
        scenario=scenario.name,
        warmup_s=scenario.warmup_s,
        duration_s=scenario.duration_s,
        checkpoint_interval_s=scenario.engine.checkpoint_interval_s,
    )


def _stop(
    progress: RunProgress,
    appliers: list[SkewApplier | NetworkFaults],
    background: Background,
    supervisor: Supervisor,
    interrupted: Interrupted | None,
) -> tuple[int | None, Interrupted | None]:
    """Stop the runner's faults (heal the links), the background work and the driver, with
    signals held; the driver's exit code, and the interruption (one that arrived meanwhile
    counts too)."""
    with signals_held() as held:
        progress.note("stopping...")
        for applier in appliers:
            applier.stop()
        background.stop()
        timeout = INTERRUPT_STOP_S if interrupted else STOP_TIMEOUT_S
        code = supervisor.stop(timeout, hurry=held.arrived)
        return code, interrupted or held.take()


def _drive(
    scenario: Scenario,
    paths: RunPaths,
    supervisor: Supervisor,
    t0: float,
    occurrences: Sequence[Occurrence[Any]],
    fired: FiredLog,
    law: RateLaw,
    progress: RunProgress,
) -> None:
    """Until the run's time is up, its faults settled and its `min_commits` made (or the
    settle limit passed): tick the supervisor, sample the series once a second."""
    status_file, commits = supervisor.status_file, CommitCount(paths.history)
    last_rows, next_sample = 0, t0 + 1.0
    while (now := time.time()) < t0 + scenario.run_s or (
        (
            supervisor.settling()
            or unsettled(occurrences, fired, scenario.run_s)
            or commits.count < scenario.min_commits
        )
        and now < t0 + scenario.run_s + SETTLE_LIMIT_S
    ):
        supervisor.tick()
        if now >= next_sample:
            if commits.count < scenario.min_commits:
                commits.refresh()
            sample = _sample(status_file, law, occurrences, now, now - t0, last_rows)
            append_series(paths.history, sample)
            rows, pending = sample["rows_committed_total"], sample["pending_instants"]
            progress.update(now - t0, max(rows - last_rows, 0), pending, sample["active_faults"])
            last_rows, next_sample = rows, next_sample + 1.0
        time.sleep(0.05)


def _finish(
    scenario: Scenario,
    paths: RunPaths,
    variant: str | None,
    store: TableStore,
    history: HistoryWriter,
    supervisor: Supervisor,
    error: str | None,
    interrupted: Interrupted | None,
    progress: RunProgress,
) -> RunOutcome:
    """Keep the final table's copy, end the history, judge the run (or raise the partial
    outcome of an interrupted one)."""
    try:
        with signals_held():  # the checks read this copy of the final table
            store.keep_copy()
    except OSError as exc:
        error = error or f"could not copy the table out of its store: {exc}"
    if interrupted is not None:
        error = _interrupted_error(interrupted, supervisor.t0)
    history.record("run_end", status="error" if error else "ok", error=error)
    if interrupted is not None:
        raise _partial(scenario, paths, variant, interrupted, supervisor.t0)
    try:
        return RunOutcome(paths, _write_result(scenario, paths, variant, error, progress.phase))
    except KeyboardInterrupt as exc:  # while checking: the checks are not done
        stopped = as_interrupted(exc)
        raise _partial(scenario, paths, variant, stopped, supervisor.t0, "while checking") from None


def _interrupted_error(interrupted: Interrupted, t0: float | None, when: str = "") -> str:
    at = f" at {time.time() - t0:.1f} s" if t0 is not None else " during start-up"
    return f"interrupted by {interrupted.name}{at}{' ' + when if when else ''}; partial results"


def _partial(
    scenario: Scenario,
    paths: RunPaths,
    variant: str | None,
    interrupted: Interrupted,
    t0: float | None,
    when: str = "",
) -> Interrupted:
    """Write what the run has (verdict unknown), then the caller raises `interrupted`."""
    with signals_held() as held:  # writing the result must not be cut short
        _write_result(scenario, paths, variant, _interrupted_error(interrupted, t0, when))
        held.take()
    interrupted.run_dir = paths.root
    return interrupted


def stop_error(code: int | None, log_path: Path) -> str | None:
    """The run's error, if its last driver did not stop cleanly. A driver whose
    coordinator refused a commit for good (COMMIT_REFUSED_EXIT: the instant rolled back,
    which no restart changes) leaves the verdict to the checks; any other failure leaves
    work a restart's recovery would do (an instant to recommit): unknown."""
    if code in (0, COMMIT_REFUSED_EXIT):
        return None
    return f"the pipeline driver did not stop cleanly (exit {code}); see {log_path}"


def _write_result(
    scenario: Scenario,
    paths: RunPaths,
    variant: str | None,
    error: str | None,
    on_phase: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    result = analyse_run(scenario, paths, paths.root.name, variant, error, on_phase)
    paths.result.write_text(json.dumps(result, indent=2, default=str))
    return result
