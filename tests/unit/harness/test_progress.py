"""Progress of long jobs (run k of N, elapsed, time left, the analysis status line) and the
terminal comparison table, without Spark: a fake clock and a fake runner."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from rich.console import Console

from harness.runner.progress import JobProgress, RunProgress, current_job

SCENARIOS = Path(__file__).parents[3] / "scenarios"


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def rendered(job: JobProgress) -> str:
    console = Console(file=StringIO(), width=120)
    console.print(job.renderable())
    return console.file.getvalue()


def test_the_job_line_counts_runs_and_estimates_from_run_s_plus_measured_overhead() -> None:
    clock = FakeClock()
    with JobProgress("compare x", [40.0] * 8, quiet=True, clock=clock) as job:
        with job.run("a"):
            clock.now += 5
            # no run done yet: the overhead is unknown, the estimate a lower bound (8 x 40 - 5)
            assert job.describe() == "compare x: run 1 of 8, elapsed 0:05, at least 5:15 left"
            clock.now += 75  # the first run took 80 s: 40 measured + 40 overhead
        clock.now += 10
        with job.run("b"):
            assert "run 2 of 8" in job.describe()
            # 7 runs of 40 + 40 s, less the 0 s of run 2 so far
            assert job.describe().endswith("elapsed 1:30, about 9:20 left")
            clock.now += 30
            assert job.remaining_s() == pytest.approx(7 * 80 - 30)
            clock.now += 500  # a run far past its estimate: what follows it is still ahead
            assert job.remaining_s() == pytest.approx(6 * 80)


def test_capacity_says_at_most_since_a_failing_rate_skips_the_higher_ones() -> None:
    clock = FakeClock()
    with JobProgress("capacity x", [30.0] * 6, quiet=True, at_most=True, clock=clock) as job:
        with job.run("p1"):
            clock.now += 60
        assert job.describe().startswith("capacity x: run 1 of at most 6")
        assert job.describe().endswith("up to about 5:00 left")  # 5 x (30 + 30 measured)


def test_the_analysis_phases_show_as_the_job_status_line_under_the_run_bar() -> None:
    with JobProgress(
        "nightly n", [30.0, 30.0], quiet=False, console=Console(file=StringIO())
    ) as job:
        with job.run("smoke#0"), RunProgress("smoke-2026", 30.0, quiet=False) as run:
            run.update(12.0, 15_000, 1, [])
            run.phase("checks: exactly_once, unique_keys on spark")
            text = rendered(job)
            lines = text.splitlines()
            assert "run 1 of 2" in lines[0]
            assert "smoke-2026" in lines[1] and "15,000 rows/s" in lines[1]
            assert "checks: exactly_once, unique_keys on spark" in lines[2]
        # a finished run leaves its bar and status behind
        assert "smoke-2026" not in rendered(job) and "checks:" not in rendered(job)
    assert current_job() is None


def fake_runner(tmp_path: Path, seen: list[str]):
    """run_scenario as the compare job calls it: notes the job's line as the run starts,
    goes through the runner's display (bar, then analysis phases) and returns an outcome."""
    from harness.runner.run import RunOutcome
    from harness.runner.rundir import RunPaths

    def run_scenario(scenario, runs_dir, variant, quiet):
        job = current_job()
        assert job is not None
        seen.append(job.describe())
        with RunProgress(variant, scenario.run_s, quiet) as progress:
            progress.update(scenario.run_s, 15_000, 0, [])
        progress.phase("analysing: reading the table")
        root = tmp_path / f"run-{len(seen)}"
        return RunOutcome(RunPaths(root, root / "table"), {"verdict": "valid"})

    return run_scenario


@pytest.mark.parametrize("quiet", [False, True])
def test_compare_shows_run_k_of_n_on_stderr_never_on_stdout(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    quiet: bool,
) -> None:
    import harness.jobs.compare as job
    from harness.metrics import CompareParams
    from harness.scenario import load_scenario

    seen: list[str] = []
    monkeypatch.setattr(job, "run_scenario", fake_runner(tmp_path, seen))
    scenario = load_scenario(
        SCENARIOS / "blocking-vs-async.yaml",
        ["source.rate.ceiling_rows_per_s=30000", "compare={}"],  # 4 pairs, one look
    )
    job.run_comparison(
        scenario, tmp_path / "out", repeat=4, quiet=quiet, params=CompareParams(resamples=50)
    )
    assert len(seen) == 8
    assert "run 2 of 8" in seen[1] and "run 8 of 8" in seen[7]
    # after a run the estimate is "about" (its measured overhead is known)
    assert "at least" in seen[0] and "about" in seen[1]
    captured = capsys.readouterr()
    assert captured.out == ""  # stdout is for answers and --json documents
    if quiet:
        assert captured.err == ""
    else:
        assert "run 8 of 8 done: instant-mode-async" in captured.err
        assert "analysing: reading the table" not in captured.out


def test_a_metric_name_wider_than_the_terminal_is_printed_whole() -> None:
    from harness.cli.tables import print_comparison

    name = "writer_blocked_ms_per_s.mean_of_a_metric_whose_name_is_wider_than_the_terminal"
    row = {
        "metric": name,
        "a": 1267.0,
        "b": 1136.0,
        "delta_pct": -10.3,
        "ci_pct": [-18.8, -3.0],
        "q_value": 0.0037,
        "verdict": "better",
    }
    console = Console(file=StringIO(), width=40)
    print_comparison([{"a": "blocking", "b": "async", "rows": [row]}], {}, console)
    text = console.file.getvalue()
    assert len(name) > 40
    line = next(line for line in text.splitlines() if name in line)  # whole, on one line
    for value in ("1,267", "1,136", "-10.3% [-18.8, -3.0]", "0.0037", "better"):
        assert value in line
