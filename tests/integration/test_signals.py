"""SIGTERM stops a run like Ctrl-C (DESIGN.md, "Evidence rules"): the driver, its JVM and
every Python worker are gone, the partial result says unknown, the table reopens."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from engine.table import Table
from harness.runner.driver_process import DRIVER_ENV
from infra.cluster.procs import pids_with_env, proc_env

pytestmark = pytest.mark.spark

SMOKE = Path(__file__).resolve().parents[2] / "scenarios" / "smoke.yaml"
STARTUP_S = 240  # Spark's start-up on a loaded 2-core machine


def _driver_pids(run_dir: Path) -> set[int]:
    """Processes of this run's drivers (the marker names the driver's log in the run dir)."""
    return {
        pid
        for pid in pids_with_env(DRIVER_ENV)
        if proc_env(pid).get(DRIVER_ENV, "").startswith(str(run_dir))
    }


def _described(processes: list[psutil.Process]) -> list[tuple[psutil.Process, str, str]]:
    """Each process with its name and command line, skipping any that exited meanwhile: a
    short-lived child (Spark's launcher shells) may be a zombie by the time it is read."""
    described = []
    for process in processes:
        try:
            described.append((process, process.name(), " ".join(process.cmdline())))
        except psutil.NoSuchProcess:  # ZombieProcess included
            continue
    return described


def _wait_for_commits(out: Path, runner: subprocess.Popen) -> Path:
    """The run directory, once the runner sampled committed rows: the query runs, writer
    tasks (Python workers) exist. A condition, not a sleep."""
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        assert runner.poll() is None, f"the run ended early ({runner.returncode})"
        for series in out.glob("*/history/series.jsonl"):
            lines = series.read_text().splitlines()
            if any(json.loads(line).get("rows_committed_total", 0) > 0 for line in lines[:-1]):
                return series.parents[1]
        time.sleep(0.2)
    raise AssertionError(f"no committed rows within {STARTUP_S}s")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_a_signal_stops_everything_the_run_started(tmp_path, sig):
    out = tmp_path / "runs"
    command = [sys.executable, "-c", "from harness.cli import main; main()", "run", str(SMOKE)]
    options = ["--out", str(out), "--quiet", "--set", "warmup_s=5", "--set", "duration_s=120"]
    with open(tmp_path / "stderr", "w+") as stderr:
        runner = subprocess.Popen(command + options, stdout=subprocess.DEVNULL, stderr=stderr)
        try:
            run_dir = _wait_for_commits(out, runner)
            started = _described(psutil.Process(runner.pid).children(recursive=True))
            names = {name for _, name, _ in started}
            assert "java" in names, names  # the driver's JVM
            workers = [p for p, _, cmdline in started if "pyspark" in cmdline]
            assert workers, [cmdline for _, _, cmdline in started]  # its Python workers
            assert {p.pid for p in workers} <= _driver_pids(run_dir)

            runner.send_signal(sig)
            code = runner.wait(60)
        finally:
            if runner.poll() is None:
                runner.kill()
                runner.wait()
        stderr.seek(0)
        lines = stderr.read().splitlines()

    assert code == 2, lines
    assert len(lines) == 1 and f"interrupted by {sig.name}" in lines[0], lines
    assert str(run_dir) in lines[0]
    _, alive = psutil.wait_procs([p for p, _, _ in started], timeout=10)
    assert alive == [], [(p.pid, p.name()) for p in alive]
    assert _driver_pids(run_dir) == set()

    result = json.loads((run_dir / "result.json").read_text())
    assert result["verdict"] == "unknown"
    assert f"interrupted by {sig.name}" in result["error"]
    assert result["metrics"]["rows_committed"] > 0  # what the run had is kept
    table = Table.open(str(run_dir / "table"))
    try:
        assert table.snapshot(columns=["event_id"]).num_rows > 0
    finally:
        table.close()
