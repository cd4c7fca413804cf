"""`instantbench compare`: interleaved repetitions of two or more variants (A, B, C, A, B, C,
...), then for every pair of variants a paired table of metric / A / B / delta% with its
interval / verdict (harness.metrics.compare: hierarchical block bootstrap,
Benjamini-Hochberg across all the pairs' metrics)."""

from __future__ import annotations

import itertools
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from harness.history import read_events
from harness.jobs.ceiling import Ceiling, resolve_load
from harness.metrics import CompareParams, MetricParams, RunSamples, compare_variants, run_samples
from harness.metrics.samples import SERIES
from harness.metrics.sequential import SequentialPlan, conclusion, decision, undecided
from harness.runner.environment import spark_line
from harness.runner.progress import JobProgress
from harness.runner.run import run_scenario
from harness.runner.rundir import RunOutcome
from harness.scenario import Scenario, ScenarioError, expand_matrix, validate_scenario
from harness.scenario.errors import Problem
from harness.scenario.keys import DottedKeyError
from harness.scenario.overrides import parse_axis

# A per-second series and the result.json metric made of it, where their names differ.
SERIES_METRIC = {"rows_per_s": "throughput_rows_per_s"}

# Every pair of variants is compared: six variants are 15 tables, and each run of each
# variant is repeated; more is a sweep (`nightly`, `capacity`), not a comparison.
MAX_COMPARED = 6


class PairTable(TypedDict):
    a: str
    b: str
    rows: list[dict[str, Any]]


@dataclass
class Comparison:
    out_dir: Path
    variants: list[str]
    runs: dict[str, list[RunOutcome]] = field(default_factory=dict)
    # One table per pair of variants, in order (A, B), (A, C), (B, C): B against A.
    tables: list[PairTable] = field(default_factory=list)
    ceiling: Ceiling | None = None  # the measured ceiling a fraction_of_ceiling rate is of
    params: CompareParams = field(default_factory=CompareParams)  # as every look tested
    stopped: str | None = None  # why no more pairs were run
    undecided: list[str] = field(default_factory=list)  # `pair: metric` left undecided

    @property
    def table(self) -> list[dict[str, Any]]:
        """The first pair's rows (the whole comparison when there are two variants)."""
        return self.tables[0]["rows"] if self.tables else []

    @property
    def level_pct(self) -> float:
        """The level of every interval in the tables (each look's, when it looked often)."""
        return round(100 * (1 - self.params.alpha), 2)

    def conclusions(self, decide: Sequence[str]) -> list[dict[str, str]]:
        """The metrics to decide, in plain words, for every pair."""
        delta = self.params.min_delta_pct
        return [
            {
                "pair": f"{t['b']} vs {t['a']}",
                "metric": row["metric"],
                "decision": decision(row, delta),
                "text": conclusion(row, delta, self.level_pct),
            }
            for t in self.tables
            for row in t["rows"]
            if row["metric"] in decide
        ]

    @property
    def verdicts(self) -> list[str]:
        return [o.verdict for outs in self.runs.values() for o in outs]

    @property
    def spark_lines(self) -> dict[str, str | None]:
        """Each variant's system and Spark line (its first run's)."""
        return {v: spark_line(outs[0].result) if outs else None for v, outs in self.runs.items()}


def with_axis(scenario: Scenario, axis: str) -> Scenario:
    """`--axis KEY=V1,V2` replaces the scenario's matrix with that one axis."""
    try:
        key, values = parse_axis(axis)
    except DottedKeyError as exc:
        raise ScenarioError(f"--axis {axis}", [Problem(exc.key, exc.message)]) from None
    raw = scenario.model_dump(mode="json")
    raw["matrix"] = {key: values}
    return validate_scenario(raw, f"--axis {axis}")


def outcome_samples(outcome: RunOutcome, scenario: Scenario) -> RunSamples:
    """The run's per-second samples from its history; a run without a usable history
    (it failed early) has none, so every metric of its pair is left out. A series the
    run's result.json reports as not measured is left out too: a system without that part
    (Hudi's sink has no engine source and no writer that waits) must not count as 0."""
    params = MetricParams(checkpoint_interval_s=scenario.engine.checkpoint_interval_s)
    try:
        samples = run_samples(read_events(outcome.paths.history), params)
    except Exception:  # no run_start, unreadable lines: nothing to resample
        return RunSamples(0, {})
    missing = unmeasured(outcome.result)
    kept = {name: s for name, s in samples.sources.items() if name not in missing}
    return RunSamples(samples.n_seconds, kept)


def unmeasured(result: dict[str, Any]) -> set[str]:
    """Series whose metric in result.json is null throughout (nothing measured it)."""
    metrics = result.get("metrics") or {}
    return {
        series
        for series in SERIES
        if isinstance(metric := metrics.get(SERIES_METRIC.get(series, series)), dict)
        and metric
        and all(value is None for value in metric.values())
    }


def table_rows(stats: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"metric": key, **value} for key, value in stats.items()]


def run_comparison(
    scenario: Scenario,
    out: Path,
    repeat: int | None = None,
    quiet: bool = False,
    on_run: Callable[[RunOutcome], object] | None = None,
    params: CompareParams | None = None,
) -> Comparison:
    started = time.monotonic()
    variants = expand_matrix(scenario)
    if not 2 <= len(variants) <= MAX_COMPARED:
        raise ValueError(
            f"{scenario.source_file}: compare needs a matrix (or --axis) with 2 to "
            f"{MAX_COMPARED} variants, this one has {len(variants)}"
        )
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    comparison = Comparison(out / f"{scenario.name}-compare-{stamp}", [v for v, _ in variants])
    # Every variant at one absolute rate: the scenario's ceiling as written, without matrix.
    scenario, comparison.ceiling = resolve_load(scenario, comparison.out_dir, quiet)
    variants = expand_matrix(scenario)
    comparison.runs = {name: [] for name, _ in variants}
    plan = SequentialPlan(
        tuple(scenario.compare.decide), repeat or scenario.repeat, scenario.compare.budget_s
    )
    comparison.params = base = params or CompareParams()
    if plan.decide:
        comparison.params = plan.look_params(base)
    samples: dict[str, list[RunSamples]] = {name: [] for name, _ in variants}
    runs_dir = comparison.out_dir / "runs"
    durations = [resolved.run_s for _ in range(plan.max_pairs) for _, resolved in variants]
    pairs_started = time.monotonic()
    label = f"compare {scenario.name}"
    with JobProgress(label, durations, quiet, at_most=bool(plan.decide)) as job:
        for pair in range(1, plan.max_pairs + 1):
            for name, resolved in variants:
                with job.run(name):
                    outcome = run_scenario(resolved, runs_dir, name, quiet)
                comparison.runs[name].append(outcome)
                samples[name].append(outcome_samples(outcome, resolved))
                if on_run is not None:
                    job.status("rendering the report")
                    _render(on_run, outcome)
            now = time.monotonic()
            spent = (now - started, now - pairs_started)
            comparison.stopped = _after_pair(comparison, samples, plan, pair, spent)
            if comparison.stopped:
                break
    _write_compare_json(scenario, comparison, plan)
    return comparison


def _look(comparison: Comparison, samples: dict[str, list[RunSamples]]) -> None:
    """The tables over the pairs run so far."""
    pairs = list(itertools.combinations(comparison.variants, 2))
    results = compare_variants(samples, pairs, params=comparison.params)
    comparison.tables = [
        PairTable(a=a, b=b, rows=table_rows(stats))
        for (a, b), stats in zip(pairs, results, strict=True)
    ]


def _after_pair(
    comparison: Comparison,
    samples: dict[str, list[RunSamples]],
    plan: SequentialPlan,
    pairs: int,
    spent: tuple[float, float],
) -> str | None:
    """Look at the pairs so far when the plan says to; why the comparison stops, if it does.
    A budget is kept by not starting a pair that would end past it, judged by the mean pair
    so far (`spent`: seconds since the comparison began, and since its first pair)."""
    if pairs >= plan.max_pairs:
        _look(comparison, samples)
        return f"{pairs} pairs (repeat)"
    if not plan.decide or pairs < comparison.params.min_pairs:
        return None
    _look(comparison, samples)
    comparison.undecided = undecided(
        comparison.tables, plan.decide, comparison.params.min_delta_pct
    )
    if not comparison.undecided:
        return f"every metric to decide is decided after {pairs} pairs"
    total_s, pairs_s = spent
    if plan.budget_s is not None and total_s + pairs_s / pairs > plan.budget_s:
        return f"{pairs} pairs: another would end past the budget of {plan.budget_s:g} s"
    return None


def _render(on_run: Callable[[RunOutcome], object], outcome: RunOutcome) -> None:
    try:
        on_run(outcome)
    except Exception as exc:  # a report that fails to render loses no runs
        print(f"{outcome.paths.root}: {type(exc).__name__}: {exc}", file=sys.stderr)


def _write_compare_json(scenario: Scenario, comparison: Comparison, plan: SequentialPlan) -> None:
    runs = comparison.runs
    document = {
        "scenario": scenario.name,
        "variants": comparison.variants,
        "spark_lines": comparison.spark_lines,
        "ceiling": comparison.ceiling.to_dict() if comparison.ceiling else None,
        "runs": {v: [str(o.paths.root) for o in outs] for v, outs in runs.items()},
        "verdicts": {v: [o.verdict for o in outs] for v, outs in runs.items()},
        "statistics": {
            **asdict(comparison.params),
            "interval": "hierarchical bootstrap: pairs, then circular blocks of seconds",
            "fdr": "Benjamini-Hochberg",
            "decide": list(plan.decide),
            "looks_planned": plan.looks(comparison.params) if plan.decide else 1,
            "budget_s": plan.budget_s,
            "level_pct": comparison.level_pct,
            "stopped": comparison.stopped,
            "undecided": comparison.undecided,
        },
        "conclusions": comparison.conclusions(plan.decide),
        # "table" is the first pair's (the whole comparison of two variants); "tables"
        # has every pair, B against A.
        "table": comparison.table,
        "tables": comparison.tables,
    }
    comparison.out_dir.mkdir(parents=True, exist_ok=True)
    (comparison.out_dir / "compare.json").write_text(json.dumps(document, indent=2, default=str))
