"""One scenario run: set up the table, supervise the driver, sample, stop, analyse."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from harness.history import HistoryWriter, append_series
from harness.pipeline.rates import rate_law
from harness.runner.analysis import analyse_run
from harness.runner.driver_config import driver_config
from harness.runner.driver_process import DriverProcess
from harness.runner.progress import RunProgress
from harness.runner.rundir import RunPaths, new_run_dir
from harness.runner.table_setup import set_up_table
from harness.scenario import Scenario
from harness.workload.background import Background, start_background

STARTUP_TIMEOUT_S = 180
STOP_TIMEOUT_S = 120


class RunError(RuntimeError):
    """The run could not be carried out (its verdict is unknown)."""


@dataclass
class RunOutcome:
    paths: RunPaths
    result: dict

    @property
    def verdict(self) -> str:
        return self.result["verdict"]


def _read_status(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def _wait_for_t0(cfg_t0_file: Path, driver: DriverProcess) -> float:
    deadline = time.time() + STARTUP_TIMEOUT_S
    while time.time() < deadline:
        if cfg_t0_file.exists():
            return float(cfg_t0_file.read_text())
        if driver.exit_code() is not None:
            raise RunError(f"the pipeline driver exited with {driver.exit_code()} during start-up")
        time.sleep(0.1)
    raise RunError(f"the pipeline driver did not start its query within {STARTUP_TIMEOUT_S}s")


def run_scenario(
    scenario: Scenario,
    out: Path,
    variant: str | None = None,
    quiet: bool = False,
    master: str | None = None,
) -> RunOutcome:
    paths = new_run_dir(out, scenario.name, variant, scenario.table.path)
    run_id = paths.root.name
    paths.scenario.write_text(scenario.to_yaml())
    history = HistoryWriter(paths.history, "runner")
    set_up_table(scenario, paths)
    cfg = driver_config(scenario, paths, run_id, master)
    cfg_path = paths.control / "driver.json"
    cfg.save(cfg_path)
    driver = DriverProcess(cfg_path, paths.logs / "driver.log")
    law = rate_law(cfg.rate, scenario.run_s)
    status_file, stop_file = Path(cfg.status_file), Path(cfg.stop_file)
    error: str | None = None
    background = Background()
    with RunProgress(run_id, scenario.run_s, quiet) as progress:
        try:
            driver.start()
            t0 = _wait_for_t0(Path(cfg.t0_file), driver)
            history.record(
                "run_start",
                t=t0,
                run_id=run_id,
                scenario=scenario.name,
                warmup_s=scenario.warmup_s,
                duration_s=scenario.duration_s,
            )
            background = start_background(scenario, str(paths.table), history)
            last_rows, next_sample = 0, t0 + 1.0
            while (now := time.time()) < t0 + scenario.run_s:
                if driver.exit_code() is not None:
                    raise RunError(
                        f"the pipeline driver exited with {driver.exit_code()}; "
                        f"see {paths.logs / 'driver.log'}"
                    )
                if now >= next_sample:
                    status = _read_status(status_file)
                    rows = int(status.get("rows_committed", 0))
                    sample = {
                        "t": now,
                        "elapsed_s": now - t0,
                        "source_offset": law.available(now - t0) if not law.unbounded else None,
                        "committed_offset": status.get("committed_offset", 0),
                        "pending_instants": status.get("pending_instants", 0),
                        "rows_committed_total": rows,
                        "active_faults": [],
                    }
                    append_series(paths.history, sample)
                    progress.update(now - t0, rows - last_rows, sample["pending_instants"], [])
                    last_rows, next_sample = rows, next_sample + 1.0
                time.sleep(0.05)
        except RunError as exc:
            error = str(exc)
        finally:
            progress.note("stopping...")
            background.stop()
            stop_file.touch()
            if driver.wait(STOP_TIMEOUT_S) is None:
                error = error or f"the pipeline driver did not stop within {STOP_TIMEOUT_S}s"
                driver.kill()
            driver.kill_group()
            if error is None and driver.exit_code() not in (0, None):
                error = f"the pipeline driver failed (exit {driver.exit_code()}); see {paths.logs}"
    history.record("run_end", status="error" if error else "ok", error=error)
    result = analyse_run(scenario, paths, run_id, variant, error)
    paths.result.write_text(json.dumps(result, indent=2, default=str))
    return RunOutcome(paths, result)
