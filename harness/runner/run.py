"""One scenario run: set up the table, supervise the driver, sample, stop, analyse."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.errors import EngineError
from harness.faults.fired import FiredLog
from harness.faults.network import NetworkFaults
from harness.faults.schedule import Occurrence
from harness.faults.skew import SkewApplier
from harness.history import HistoryWriter
from harness.pipeline.config import COMMIT_REFUSED_EXIT, DriverConfig
from harness.pipeline.rates import rate_law
from harness.runner.analysis import analyse_run
from harness.runner.cluster_setup import start_cluster
from harness.runner.driver_config import driver_config, fault_occurrences
from harness.runner.environment import live_spark_ui
from harness.runner.errors import RunError
from harness.runner.hosts_setup import placement
from harness.runner.interrupt import Interrupted, as_interrupted, signals_held
from harness.runner.lock_setup import run_lock_spec, start_run_lock
from harness.runner.progress import RunProgress
from harness.runner.run_loop import (
    drive,
    runner_storage_faults,
    start_runner_faults,
    stop_run,
    wait_for_t0,
)
from harness.runner.rundir import RunOutcome, RunPaths, new_run_paths
from harness.runner.runner_host import run_on_hosts
from harness.runner.supervisor import Supervisor
from harness.runner.table_setup import set_up_table
from harness.runner.table_store import TableStore
from harness.scenario import Scenario, ScenarioError
from harness.scenario.errors import Problem
from harness.scenario.rate import ConstantRate
from harness.workload.background import Background, start_background

if TYPE_CHECKING:
    from infra.cluster import ClusterBackend
    from infra.cluster.info import ClusterInfo
    from infra.hosts import HostNetwork
    from infra.hosts.placement import Placement


def run_scenario(
    scenario: Scenario,
    out: Path,
    variant: str | None = None,
    quiet: bool = False,
    master: str | None = None,
) -> RunOutcome:
    _require_rate(scenario)
    if scenario.system.kind == "hudi":  # Apache Hudi's own writer, on its own Spark runtime
        from harness.systems.hudi.run import run_hudi

        return run_hudi(scenario, out, variant, quiet)
    if scenario.system.kind in ("delta", "iceberg"):  # a format's own Spark sink
        from harness.systems.registry import sink_system
        from harness.systems.spark_stream.sink_run import run_sink

        return run_sink(sink_system(scenario.system), scenario, out, variant, quiet)
    paths = new_run_paths(scenario, out, variant)
    if scenario.cluster.backend == "hosts":  # the run's own hosts, its runner on one
        return run_on_hosts(scenario, paths, variant, quiet, master)
    return run_stored(scenario, paths, variant, quiet, master, None)


def _require_rate(scenario: Scenario) -> None:
    """A fraction of the ceiling is resolved by the job before its runs (compare, run,
    nightly, capacity: harness.jobs.ceiling.resolve_load); a run needs the rate itself."""
    rate = scenario.source.rate
    if isinstance(rate, ConstantRate) and rate.unresolved:
        problem = Problem("source.rate.fraction_of_ceiling", "not resolved to rows_per_s")
        raise ScenarioError(scenario.source_file, [problem])


def run_stored(
    scenario: Scenario,
    paths: RunPaths,
    variant: str | None,
    quiet: bool,
    master: str | None,
    hosts: HostNetwork | None,
) -> RunOutcome:
    """The run with its table's store started (and stopped after, however it ends)."""
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
    driver = placement(hosts, "driver")
    master_url = info.master_url if info else master
    cfg, cfg_path = _driver_setup(scenario, paths, master_url, info, store, driver)
    occurrences = fault_occurrences(scenario)
    fired = FiredLog(cfg.fired_dir)
    driver_env = info.driver_env if info is not None else None
    supervisor = _supervisor(
        cfg, cfg_path, paths, history, occurrences, fired, (cluster, driver_env), driver
    )
    law = rate_law(cfg.rate, scenario.run_s)
    error: str | None = None
    interrupted: Interrupted | None = None
    background = Background()
    appliers: list[SkewApplier | NetworkFaults] = []
    with RunProgress(run_id, scenario.run_s, quiet) as progress:
        try:
            supervisor.start()
            t0 = supervisor.t0 = wait_for_t0(Path(cfg.t0_file), supervisor)
            if ui := live_spark_ui(paths.history):
                progress.print(f"Spark UI (while the run lasts): {ui}")
            _record_start(history, scenario, run_id, t0)
            background = start_background(
                scenario,
                paths.table_location,
                history,
                runner_storage_faults(cfg, t0, history),
                run_lock_spec(paths),
            )
            appliers = start_runner_faults(occurrences, background, t0, history, fired, hosts)
            drive(scenario, paths, supervisor, t0, occurrences, fired, law, progress)
        except (RunError, RuntimeError) as exc:
            error = str(exc)
        except KeyboardInterrupt as exc:  # SIGINT or SIGTERM (harness.runner.interrupt)
            interrupted = as_interrupted(exc)
        finally:
            code, interrupted = stop_run(progress, appliers, background, supervisor, interrupted)
            if interrupted is None and error is None:
                error = stop_error(code, supervisor.driver.log_path)
    return _finish(
        scenario, paths, variant, store, history, supervisor, error, interrupted, progress
    )


def _supervisor(
    cfg: DriverConfig,
    cfg_path: Path,
    paths: RunPaths,
    history: HistoryWriter,
    occurrences: list[Occurrence[Any]],
    fired: FiredLog,
    cluster_env: tuple[ClusterBackend | None, dict[str, str] | None],
    driver: Placement,
) -> Supervisor:
    """The driver's supervisor: on the cluster, in its driver environment, on the driver's
    host."""
    cluster, env = cluster_env
    return Supervisor(
        cfg_path,
        Path(cfg.stop_file),
        Path(cfg.status_file),
        paths.logs,
        history,
        occurrences,
        fired,
        cluster=cluster,
        env=env,
        placement=driver,
    )


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
