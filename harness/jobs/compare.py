"""`instantbench compare`: interleaved repetitions of each variant, then a paired table
of metric / A / B / delta% / Mann-Whitney U p-value / verdict."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.metrics import DIRECTIONS, compare_runs
from harness.runner.run import RunOutcome, run_scenario
from harness.scenario import Scenario, expand_matrix, validate_scenario

# Smoothness per checkpoint interval (see harness/runner/analysis.py) is judged too.
COMPARE_DIRECTIONS = {
    **DIRECTIONS,
    "throughput_per_checkpoint_rows_per_s.cv": "lower",
    "throughput_per_checkpoint_rows_per_s.floor_ratio": "higher",
    "throughput_per_checkpoint_rows_per_s.p5": "higher",
}


@dataclass
class Comparison:
    out_dir: Path
    variants: list[str]
    runs: dict[str, list[RunOutcome]] = field(default_factory=dict)
    table: list[dict[str, Any]] = field(default_factory=list)

    @property
    def verdicts(self) -> list[str]:
        return [o.verdict for outs in self.runs.values() for o in outs]


def with_axis(scenario: Scenario, axis: str) -> Scenario:
    """`--axis KEY=V1,V2` replaces the scenario's matrix with that one axis."""
    key, _, values = axis.partition("=")
    raw = scenario.model_dump(mode="json")
    raw["matrix"] = {key.strip(): [v.strip() for v in values.split(",") if v.strip()]}
    return validate_scenario(raw, f"--axis {axis}")


def run_comparison(
    scenario: Scenario,
    out: Path,
    repeat: int | None = None,
    quiet: bool = False,
    on_run: Callable[[RunOutcome], None] | None = None,
) -> Comparison:
    variants = expand_matrix(scenario)
    if len(variants) != 2:
        raise ValueError(
            f"{scenario.source_file}: compare needs a matrix (or --axis) with exactly two "
            f"variants, this one has {len(variants)}"
        )
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    comparison = Comparison(out / f"{scenario.name}-compare-{stamp}", [v for v, _ in variants])
    comparison.runs = {name: [] for name, _ in variants}
    runs_dir = comparison.out_dir / "runs"
    # Interleave A, B, A, B, ...: drift of the machine over time hits both alike.
    for _ in range(repeat or scenario.repeat):
        for name, resolved in variants:
            outcome = run_scenario(resolved, runs_dir, name, quiet)
            comparison.runs[name].append(outcome)
            if on_run is not None:
                on_run(outcome)
    a, b = comparison.variants
    stats = compare_runs(
        [o.result["metrics"] for o in comparison.runs[a]],
        [o.result["metrics"] for o in comparison.runs[b]],
        COMPARE_DIRECTIONS,
    )
    comparison.table = [{"metric": key, **value} for key, value in stats.items()]
    (comparison.out_dir / "compare.json").write_text(
        json.dumps(
            {
                "scenario": scenario.name,
                "variants": comparison.variants,
                "runs": {
                    v: [str(o.paths.root) for o in outs] for v, outs in comparison.runs.items()
                },
                "verdicts": {v: [o.verdict for o in outs] for v, outs in comparison.runs.items()},
                "table": comparison.table,
            },
            indent=2,
            default=str,
        )
    )
    return comparison
