"""A/B comparison of one metric over repeated runs: delta% and a Mann-Whitney U p-value."""

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import numpy as np
from scipy.stats import mannwhitneyu

from harness.metrics.stats import num

Direction = Literal["higher", "lower"]

# Which way is good for the headline metrics (dotted paths into result.json `metrics`).
DIRECTIONS: dict[str, Direction] = {
    "rows_committed": "higher",
    "throughput_rows_per_s.mean": "higher",
    "throughput_rows_per_s.p1": "higher",
    "throughput_rows_per_s.p5": "higher",
    "throughput_rows_per_s.p50": "higher",
    "throughput_rows_per_s.cv": "lower",
    "throughput_rows_per_s.floor_ratio": "higher",
    "stalls.count": "lower",
    "stalls.total_s": "lower",
    "stalls.longest_s": "lower",
    "writer_blocked_ms_per_s.mean": "lower",
    "writer_blocked_ms_per_s.p99": "lower",
    "instant_request_ms.p99": "lower",
    "commit_latency_ms.p99": "lower",
    "commit_cadence_s.jitter": "lower",
    "freshness_s.p99": "lower",
    "freshness_s.max": "lower",
    "pending_instants.max": "lower",
    "backlog_rows.max": "lower",
}


def compare(
    samples_a: Sequence[float],
    samples_b: Sequence[float],
    direction: Direction = "higher",
    min_delta_pct: float = 5.0,
    alpha: float = 0.05,
) -> dict[str, Any]:
    """B against A: medians, delta% = (b - a) / |a|, two-sided Mann-Whitney U p-value.

    A change is reported only when it is both large (|delta| >= min_delta_pct) and
    significant (p < alpha); otherwise the verdict is 'same'. Medians, because one noisy
    repetition must not move the headline number.
    """
    a_vals = np.asarray([v for v in samples_a if v is not None], float)
    b_vals = np.asarray([v for v in samples_b if v is not None], float)
    a_vals, b_vals = a_vals[np.isfinite(a_vals)], b_vals[np.isfinite(b_vals)]
    result: dict[str, Any] = {
        "a": num(np.median(a_vals)) if a_vals.size else None,
        "b": num(np.median(b_vals)) if b_vals.size else None,
        "n_a": int(a_vals.size),
        "n_b": int(b_vals.size),
        "delta_pct": None,
        "p_value": None,
        "verdict": "same",
    }
    if not a_vals.size or not b_vals.size:
        return result
    a, b = result["a"], result["b"]
    if a != 0:
        result["delta_pct"] = num((b - a) / abs(a) * 100.0)
    identical = np.array_equal(np.sort(a_vals), np.sort(b_vals))
    result["p_value"] = (
        1.0 if identical else num(mannwhitneyu(a_vals, b_vals, alternative="two-sided").pvalue)
    )
    # From zero any change is infinitely large; the p-value alone decides then.
    large = result["delta_pct"] is None or abs(result["delta_pct"]) >= min_delta_pct
    if b != a and large and result["p_value"] is not None and result["p_value"] < alpha:
        improved = (b > a) == (direction == "higher")
        result["verdict"] = "better" if improved else "worse"
    return result


def metric_at(metrics: Mapping[str, Any], dotted: str) -> float | None:
    """The value at `throughput_rows_per_s.p5` in a result.json `metrics` dict, if any."""
    node: Any = metrics
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return num(node) if isinstance(node, int | float) else None


def compare_runs(
    metrics_a: Sequence[Mapping[str, Any]],
    metrics_b: Sequence[Mapping[str, Any]],
    directions: Mapping[str, Direction] = DIRECTIONS,
    min_delta_pct: float = 5.0,
    alpha: float = 0.05,
) -> dict[str, dict[str, Any]]:
    """compare() for every metric in `directions` over the repetitions of A and B."""
    return {
        key: compare(
            [metric_at(m, key) for m in metrics_a],
            [metric_at(m, key) for m in metrics_b],
            direction,
            min_delta_pct,
            alpha,
        )
        for key, direction in directions.items()
    }
