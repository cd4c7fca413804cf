"""A suite entry with `compare: true`: the night runs the comparison (harness/jobs/compare.py)
and keeps its headline decisions, one value per metric to decide, as a series of their
own (`<id>/decisions`), so that a decision that changes from one night to the next is
flagged like a metric regression (harness.jobs.regression.judge_change).

The decisions are stored as numbers, as every value in the store is: DECISION_CODES."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from harness.jobs.compare import run_comparison
from harness.jobs.run_record import RunRecord
from harness.jobs.suite import SuiteEntry
from harness.runner.rundir import RunOutcome

DECISION_CODES = {"worse": -1.0, "undecided": 0.0, "same": 1.0, "better": 2.0}
DECISIONS_KIND = "decision"


def decisions_series(entry: SuiteEntry) -> str:
    return f"{entry.id}/decisions"


def run_compare_entry(
    entry: SuiteEntry,
    runs_dir: Path,
    on_run: Callable[[RunOutcome], object] | None,
) -> list[RunRecord]:
    """The comparison's runs (series `<id>/<variant>`) and its decisions. Quiet: the night's
    own progress display is already on the terminal."""
    comparison = run_comparison(entry.scenario, runs_dir, quiet=True, on_run=on_run)
    records = [
        RunRecord(
            f"{entry.id}/{variant}",
            "scenario",
            "",
            "unknown",
            variant=variant,
            overrides=list(entry.overrides),
            repeat=i,
        ).finished(outcome)
        for variant, outcomes in comparison.runs.items()
        for i, outcome in enumerate(outcomes)
    ]
    pairs = len(comparison.tables)
    decided = {
        (f"{c['pair']}: {c['metric']}" if pairs > 1 else c["metric"]): DECISION_CODES[c["decision"]]
        for c in comparison.conclusions(entry.scenario.compare.decide)
    }
    # The decisions are a measurement only when every run of the comparison was valid.
    verdict = "valid" if all(r.verdict == "valid" for r in records) else "unknown"
    records.append(
        RunRecord(
            decisions_series(entry),
            DECISIONS_KIND,
            f"{entry.id}#{comparison.out_dir.name}",
            verdict,
            run_dir=str(comparison.out_dir),
            overrides=list(entry.overrides),
            error=None if verdict == "valid" else "a run of the comparison was not valid",
            metrics=decided,
        )
    )
    return records
