"""A comparison that runs pairs until its headline metrics are decided.

After each pair from CompareParams.min_pairs on, the comparison looks at its table; it
stops once every metric it must decide is decided, when its pairs run out, or when its
time budget would be passed. Each look tests at alpha / L, L the number of looks planned
(max_pairs - min_pairs + 1): by the union bound the chance that any look calls a change
that is not there stays at most alpha whatever the dependence between looks, so stopping
at the first decisive look does not inflate the error rate (a Bonferroni alpha-spending
rule; conservative, but it needs no model of how the looks correlate).

A metric is decided when its verdict is better or worse, or when its interval lies within
+-min_delta_pct: then no change of that size is there (an equivalence test at the same
level). Otherwise its interval holds both "no change" and "a change that matters", and the
comparison says so in plain words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from harness.metrics.compare import CompareParams

Decision = Literal["better", "worse", "same", "undecided"]


@dataclass(frozen=True)
class SequentialPlan:
    decide: tuple[str, ...]  # the metrics that must be decided (COMPARED keys)
    max_pairs: int
    budget_s: float | None = None  # no pair is started that would end past it

    def looks(self, params: CompareParams) -> int:
        return max(1, self.max_pairs - params.min_pairs + 1)

    def look_params(self, params: CompareParams) -> CompareParams:
        """The parameters every look tests with: alpha spent evenly over the looks."""
        return replace(params, alpha=params.alpha / self.looks(params))


def decision(row: Mapping[str, Any], min_delta_pct: float) -> Decision:
    verdict = row.get("verdict")
    if verdict in ("better", "worse"):
        return verdict  # type: ignore[return-value]
    lo, hi = row.get("ci_pct") or (None, None)
    if lo is not None and hi is not None and -min_delta_pct < lo and hi < min_delta_pct:
        return "same"
    return "undecided"


def undecided(
    tables: Sequence[Mapping[str, Any]], decide: Sequence[str], min_delta_pct: float
) -> list[str]:
    """`pair: metric` for every metric to decide that is not decided in some pair."""
    rows = [(f"{t['b']} vs {t['a']}", {r["metric"]: r for r in t["rows"]}) for t in tables]
    return [
        f"{pair}: {metric}"
        for pair, by_metric in rows
        for metric in decide
        if decision(by_metric.get(metric, {}), min_delta_pct) == "undecided"
    ]


def conclusion(row: Mapping[str, Any], min_delta_pct: float, level_pct: float) -> str:
    """One metric's answer in plain words, with the interval that shows it."""
    n, delta = row.get("n_pairs", 0), row.get("delta_pct")
    lo, hi = row.get("ci_pct") or (None, None)
    if delta is None or lo is None or hi is None:
        return f"{row['metric']}: no interval ({n} pairs measured it)"
    shown = f"{delta:+.1f}% [{lo:+.1f}, {hi:+.1f}] ({level_pct:g}% interval, {n} pairs)"
    match decision(row, min_delta_pct):
        case "better" | "worse" as verdict:
            return f"{row['metric']}: B is {verdict}, {shown}"
        case "same":
            return f"{row['metric']}: the same within +-{min_delta_pct:g}%, {shown}"
        case _:
            return (
                f"{row['metric']}: not decided, {shown}: the interval holds both no change "
                f"and a change of {min_delta_pct:g}% or more"
            )
