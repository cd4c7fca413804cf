"""`instantbench nightly SUITE`: run a suite, append every result to the store, judge each
headline metric against its own history, and write nightly.json (the trend page's input).

Exit code (NightlyResult.exit_code): 2 if a run errored or ended unknown, else 1 if a run
was invalid or a metric regressed, else 0. A suite entry with `expect` (a detection run
that must be invalid) counts by its expectation instead: met 0, missed 1.
"""

from __future__ import annotations

import json
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.checks.verdict import EXIT_INVALID, EXIT_VALID
from harness.jobs.benchmarks import run_benchmarks
from harness.jobs.ceiling import resolve_load
from harness.jobs.nightly_compare import DECISIONS_KIND, run_compare_entry
from harness.jobs.regression import (
    BENCHMARK_METRICS,
    DetectorParams,
    Direction,
    Finding,
    judge,
    judge_change,
    scenario_rules,
)
from harness.jobs.run_record import RunRecord
from harness.jobs.store import ResultsStore
from harness.jobs.suite import Suite, SuiteEntry, load_suite
from harness.runner.environment import environment
from harness.runner.errors import RunError
from harness.runner.progress import JobProgress
from harness.runner.run import run_scenario
from harness.runner.rundir import RunOutcome
from harness.scenario import ScenarioError, expand_matrix

# What is judged, by run kind: {metric: (direction, smallest absolute change that matters)}.
RULES: dict[str, dict[str, tuple[Direction, float]]] = {
    "scenario": scenario_rules(),
    "benchmark": BENCHMARK_METRICS,
}
TREND_NIGHTS = 30  # nights drawn per trend chart


@dataclass
class NightlyResult:
    night_id: str
    out_dir: Path
    store: Path
    runs: list[RunRecord]
    findings: list[Finding]

    @property
    def regressions(self) -> list[Finding]:
        return [f for f in self.findings if f.status == "regression"]

    @property
    def exit_code(self) -> int:
        worst = max((r.exit_code for r in self.runs), default=EXIT_VALID)
        return max(worst, EXIT_INVALID if self.regressions else EXIT_VALID)


def run_nightly(
    suite: Path,
    store: Path,
    quiet: bool = False,
    on_run: Callable[[RunOutcome], object] | None = None,
) -> NightlyResult:
    """Raises SuiteError (harness.jobs.suite) for a suite file that cannot be run."""
    loaded = load_suite(suite)
    now = datetime.now(UTC).replace(tzinfo=None)
    night_id = f"{loaded.name}-{now:%Y%m%dT%H%M%S}"
    out_dir = Path(store) / "nights" / night_id
    runs: list[RunRecord] = []
    plan = [  # a comparison is one status line: how many pairs it runs is its own call
        scenario.run_s
        for entry in loaded.entries
        if not entry.compare
        for _, scenario in expand_matrix(entry.scenario)
        for _ in range(entry.repeat)
    ]
    with JobProgress(f"nightly {loaded.name}", plan, quiet) as job:
        for entry in loaded.entries:
            runs += _run_entry(entry, out_dir / "runs", quiet, on_run, job)
        if loaded.benchmarks is not None:
            job.status("engine micro-benchmarks")
            runs += _run_benchmarks(loaded, out_dir)
    return record_night(loaded, Path(store), night_id, now, runs, out_dir)


def record_night(
    suite: Suite,
    store_root: Path,
    night_id: str,
    ts: datetime,
    runs: list[RunRecord],
    out_dir: Path,
) -> NightlyResult:
    """Judge the night against the store's history, append it, write nightly.json.

    Split from run_nightly so that a night's results can be recorded without running
    Spark (tests feed synthetic nights through here)."""
    store = ResultsStore(store_root)
    env = {k: v for k, v in environment(backend="").items() if k != "backend"}
    host, commit = platform.node(), env["versions"].get("commit")
    values = night_values(runs)
    history = store.history(
        suite.name, host, ts, sorted({s for _, s, _ in values}), suite.detector.window
    )
    findings = [
        _judge(kind, series, metric, value, history.get((series, metric), []), suite.detector)
        for (kind, series, metric), value in sorted(values.items())
    ]
    common = {"night_id": night_id, "ts": ts, "suite": suite.name, "commit": commit, "host": host}
    store.append(
        "metrics",
        night_id,
        [
            {**common, **_run_key(r), "verdict": r.verdict, "metric": m, "value": v}
            for r in runs
            for m, v in r.metrics.items()
        ],
    )
    store.append(
        "runs",
        night_id,
        [
            {
                **common,
                **_run_key(r),
                "run_dir": r.run_dir,
                "variant": r.variant,
                "overrides": r.overrides,
                "verdict": r.verdict,
                "error": r.error,
                "environment": json.dumps(r.environment, default=str),
            }
            for r in runs
        ],
    )
    store.append("findings", night_id, [{**common, **f.to_dict()} for f in findings])
    result = NightlyResult(night_id, out_dir, store_root, runs, findings)
    trends = store.trends(suite.name, host, [(f.series, f.metric) for f in findings], TREND_NIGHTS)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "nightly.json").write_text(
        json.dumps(_summary(suite, result, ts, commit, env, trends), indent=2, default=str)
    )
    return result


def night_values(runs: list[RunRecord]) -> dict[tuple[str, str, str], float]:
    """The night's value of every judged (kind, series, metric): the median over the valid
    repeats (an invalid or failed run's numbers are not a performance measurement)."""
    samples: dict[tuple[str, str, str], list[float]] = {}
    for run in runs:
        if run.verdict != "valid":
            continue
        # A comparison's decisions are named by its metrics to decide: every one is judged.
        for metric in run.metrics if run.kind == DECISIONS_KIND else RULES[run.kind]:
            if metric in run.metrics:
                key = (run.kind, run.series, metric)
                samples.setdefault(key, []).append(run.metrics[metric])
    return {key: statistics.median(xs) for key, xs in samples.items()}


def _judge(
    kind: str,
    series: str,
    metric: str,
    value: float,
    past: list[float],
    detector: DetectorParams,
) -> Finding:
    if kind == DECISIONS_KIND:
        return judge_change(series, metric, value, past)
    direction, floor = RULES[kind][metric]
    return judge(series, metric, value, past, direction, detector, floor)


def _run_key(run: RunRecord) -> dict[str, Any]:
    return {"series": run.series, "kind": run.kind, "run_id": run.run_id, "repeat": run.repeat}


def _run_entry(
    entry: SuiteEntry,
    runs_dir: Path,
    quiet: bool,
    on_run: Callable[[RunOutcome], object] | None,
    job: JobProgress,
) -> list[RunRecord]:
    records = []
    if entry.compare:
        job.status(f"compare {entry.id}")
        return run_compare_entry(entry, runs_dir, on_run)
    try:
        loaded, _ = resolve_load(entry.scenario, runs_dir, quiet)
    except (RunError, ScenarioError) as exc:  # one broken scenario must not cost the night
        return [RunRecord(entry.id, "scenario", f"{entry.id}#ceiling", "unknown", error=str(exc))]
    for variant, scenario in expand_matrix(loaded):
        series = f"{entry.id}/{variant}" if variant else entry.id
        for repeat in range(entry.repeat):
            record = RunRecord(
                series,
                "scenario",
                f"{series}#{repeat}",
                "unknown",
                variant=variant or None,
                overrides=list(entry.overrides),
                repeat=repeat,
                expect=entry.expect.verdict if entry.expect else None,
            )
            try:
                with job.run(record.run_id):
                    outcome = run_scenario(scenario, runs_dir, variant or None, quiet)
            except Exception as exc:  # one broken scenario must not cost the rest of the night
                record.error = f"{type(exc).__name__}: {exc}"
                records.append(record)
                continue
            records.append(record.finished(outcome, entry.missed(outcome.result)))
            if on_run is not None:
                on_run(outcome)
    return records


def _run_benchmarks(suite: Suite, out_dir: Path) -> list[RunRecord]:
    assert suite.benchmarks is not None
    started = time.time()
    bench = run_benchmarks(suite.benchmarks, out_dir / "benchmarks")
    # Each benchmark is its own series (metric `median` etc.); one record per benchmark, so
    # the store's long format is the same for scenarios and benchmarks.
    if bench.error and not bench.results:
        return [
            RunRecord(
                "benchmarks",
                "benchmark",
                "benchmarks",
                "unknown",
                run_dir=str(bench.json_path.parent),
                error=bench.error,
            )
        ]
    return [
        RunRecord(
            name,
            "benchmark",
            f"benchmarks@{started:.0f}",
            bench.verdict,
            run_dir=str(bench.json_path.parent),
            error=bench.error,
            metrics=stats,
        )
        for name, stats in bench.results.items()
    ]


def _summary(
    suite: Suite,
    result: NightlyResult,
    ts: datetime,
    commit: str | None,
    env: dict[str, Any],
    trends: dict[tuple[str, str], list[dict]],
) -> dict[str, Any]:
    by_key = {(f.series, f.metric): f for f in result.findings}
    return {
        "night_id": result.night_id,
        "suite": suite.name,
        "suite_file": str(suite.source),
        "timestamp": ts.isoformat() + "Z",
        "commit": commit,
        "store": str(result.store),
        "exit_code": result.exit_code,
        "detector": asdict(suite.detector),
        "runs": [
            {k: v for k, v in asdict(r).items() if k not in ("metrics", "environment")}
            for r in result.runs
        ],
        "regressions": [f.to_dict() for f in result.regressions],
        "findings": [f.to_dict() for f in result.findings],
        "trends": [{**by_key[key].to_dict(), "points": points} for key, points in trends.items()],
        "environment": env,
    }
