"""The loop of one run while its driver lives: wait for t0, start the faults this process
applies, sample the driver's status once a second until the run is done, stop it all."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.clock import AdjustableClock
from harness.faults.fired import FiredLog
from harness.faults.network import NetworkFaults
from harness.faults.schedule import Occurrence, of_kind
from harness.faults.settle import unsettled
from harness.faults.skew import SkewApplier
from harness.faults.storage import StorageFaults
from harness.faults.writer_pause import install_writer_pauses
from harness.history import HistoryWriter, append_series
from harness.pipeline.config import DriverConfig
from harness.pipeline.rates import RateLaw
from harness.run_clock import RunClock
from harness.runner.commit_count import CommitCount
from harness.runner.errors import RunError
from harness.runner.interrupt import Interrupted, signals_held
from harness.runner.progress import RunProgress
from harness.runner.rundir import RunPaths
from harness.runner.supervisor import Supervisor
from harness.scenario import Scenario
from harness.scenario.faults import ClockSkew
from harness.workload.background import Background

if TYPE_CHECKING:
    from infra.hosts import HostNetwork

STARTUP_TIMEOUT_S = 180
STOP_TIMEOUT_S = 120
SETTLE_LIMIT_S = 180  # past its duration, a run waits at most this long for a paused driver
# or for a fault's effect (harness/faults/settle.py)
# After SIGINT / SIGTERM: how long the driver may take to stop on its own before it and
# its processes are killed (`docker stop` and CI time-outs kill everything after ~10 s).
INTERRUPT_STOP_S = 5


def read_status(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def wait_for_t0(t0_file: Path, supervisor: Supervisor) -> float:
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
    occurrences: list[Occurrence[Any]],
    background: Background,
    t0: float,
    history: HistoryWriter,
) -> SkewApplier:
    """Clock skew of the batch writers (their clocks live in this process)."""
    clocks: dict[str, AdjustableClock] = {w.name_: w.clock for w in background.writers}
    skews = [
        o
        for o in of_kind(occurrences, ClockSkew)
        if o.fault.target in clocks or o.fault.target == "all"
    ]
    return SkewApplier(skews, clocks, RunClock(t0=t0), history)


def runner_storage_faults(cfg: DriverConfig, t0: float, history: HistoryWriter) -> StorageFaults:
    """Storage faults of the batch writers and readers (their tables live in this process)."""
    occurrences = [Occurrence.from_dict(o) for o in cfg.faults]
    return StorageFaults(
        occurrences, RunClock(t0=t0), history, FiredLog(cfg.fired_dir), cfg.storage_latency_ms
    )


def _sample(
    status_file: Path,
    law: RateLaw,
    occurrences: Sequence[Occurrence[Any]],
    now: float,
    elapsed: float,
    last_rows: int,
) -> dict[str, Any]:
    """One second of the series, from the driver's status file."""
    status = read_status(status_file)
    return {
        "t": now,
        "elapsed_s": elapsed,
        "source_offset": None if law.unbounded else law.available(elapsed),
        "committed_offset": status.get("committed_offset", 0),
        "pending_instants": status.get("pending_instants", 0),
        "rows_committed_total": int(status.get("rows_committed", last_rows)),
        "active_faults": [o.label for o in occurrences if o.active(elapsed)],
    }


def start_runner_faults(
    occurrences: list[Occurrence[Any]],
    background: Background,
    t0: float,
    history: HistoryWriter,
    fired: FiredLog,
    hosts: HostNetwork | None,
) -> list[SkewApplier | NetworkFaults]:
    """The faults this process applies: the batch writers' clocks and pauses, and the
    links between the run's hosts; what must be stopped at the end."""
    skew = _runner_skew(occurrences, background, t0, history)
    skew.start()
    install_writer_pauses(occurrences, background.writers, RunClock(t0=t0), history)
    if hosts is None:
        return [skew]
    network = NetworkFaults(hosts, occurrences, RunClock(t0=t0), history, fired)
    network.start()
    return [network, skew]  # healed first: the driver's stop must reach its executors


def stop_run(
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


def drive(
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
