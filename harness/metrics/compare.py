"""A/B comparison over paired repetitions: delta% with a hierarchical block-bootstrap
interval, and a verdict with the false-discovery rate controlled across metrics.

The statistic of a metric in one run is taken over that run's per-second samples
(harness.metrics.samples); a variant's value is the median of its runs. One bootstrap
replicate draws the pairs with replacement (A and B of a pair together, so what drifted
between pairs cancels), then redraws the seconds of each drawn run by a circular block
bootstrap (harness.metrics.resample), and takes delta% = (B* - A*) / |A*| of the medians.
So the interval holds both the noise inside the runs and the spread across them.

Verdict: better/worse only when the interval excludes zero, |delta| >= min_delta_pct and
the bootstrap p-value, adjusted across all compared metrics by Benjamini-Hochberg, is
below alpha, and at least three pairs (CompareParams.min_pairs). Otherwise 'same'.

The per-second samples behind each metric (COMPARED):
- Per-second series: x_i (throughput and stall seconds), the writers' ingest rate, writer
  blocked ms, and freshness at the end of each second: freshness_s.p99 is the p99 of the
  resampled seconds' freshness.
- Per-event values: instant_request_ms.p99 is the p99 of the requests that ended in the
  resampled seconds (a second drawn twice brings its requests twice); the same for commit
  latencies and for the gaps between commits (cadence jitter = p99 / p50 of the gaps).
Not compared: maxima (a resample never exceeds the run's maximum, so their interval says
nothing), stall counts and longest stalls (block joins cut and glue runs of seconds),
rows_committed (the mean rate says the same), backlog and pending instants (sampled by the
runner as a cumulative state, not a per-second rate).
"""

import warnings
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from scipy.stats import false_discovery_control

from harness.metrics.resample import STATISTICS, Weighted, block_counts
from harness.metrics.samples import RunSamples
from harness.metrics.stats import num

Direction = Literal["higher", "lower"]

# Which way is good, for every metric anything judges (dotted paths into result.json
# `metrics`): comparisons, and the nightly regression detector. The one place it is said.
DIRECTIONS: dict[str, Direction] = {
    "rows_committed": "higher",
    "throughput_rows_per_s.mean": "higher",
    "throughput_rows_per_s.p1": "higher",
    "throughput_rows_per_s.p5": "higher",
    "throughput_rows_per_s.p50": "higher",
    "throughput_rows_per_s.cv": "lower",
    "throughput_rows_per_s.floor_ratio": "higher",
    "ingest_rows_per_s.mean": "higher",
    "ingest_rows_per_s.cv": "lower",
    "stalls.count": "lower",
    "stalls.total_s": "lower",
    "stalls.longest_s": "lower",
    "writer_blocked_ms_per_s.mean": "lower",
    "writer_blocked_ms_per_s.p99": "lower",
    "instant_request_ms.p50": "lower",
    "instant_request_ms.p99": "lower",
    "commit_latency_ms.p50": "lower",
    "commit_latency_ms.p99": "lower",
    "commit_cadence_s.jitter": "lower",
    "freshness_s.mean": "lower",
    "freshness_s.p99": "lower",
    "freshness_s.max": "lower",
    "pending_instants.max": "lower",
    "backlog_rows.max": "lower",
}

# What a comparison resamples for each metric: (samples source, statistic); the module
# docstring says why these samples and these metrics.
COMPARED: dict[str, tuple[str, str]] = {
    "throughput_rows_per_s.mean": ("rows_per_s", "mean"),
    "throughput_rows_per_s.p5": ("rows_per_s", "p5"),
    "throughput_rows_per_s.p50": ("rows_per_s", "p50"),
    "throughput_rows_per_s.cv": ("rows_per_s", "cv"),
    "throughput_rows_per_s.floor_ratio": ("rows_per_s", "floor_ratio"),
    "stalls.total_s": ("rows_per_s", "stall_s"),
    "ingest_rows_per_s.mean": ("ingest_rows_per_s", "mean"),
    "ingest_rows_per_s.cv": ("ingest_rows_per_s", "cv"),
    "writer_blocked_ms_per_s.mean": ("writer_blocked_ms_per_s", "mean"),
    "writer_blocked_ms_per_s.p99": ("writer_blocked_ms_per_s", "p99"),
    "instant_request_ms.p99": ("instant_request_ms", "p99"),
    "commit_latency_ms.p99": ("commit_latency_ms", "p99"),
    "commit_cadence_s.jitter": ("commit_gap_s", "jitter"),
    "freshness_s.mean": ("freshness_s", "mean"),
    "freshness_s.p99": ("freshness_s", "p99"),
}


@dataclass(frozen=True)
class CompareParams:
    resamples: int = 2000
    seed: int = 1234  # fixed: the same runs always give the same intervals and verdicts
    block_s: int | None = None  # None: n^(1/3) seconds (resample.block_length)
    alpha: float = 0.05  # interval level 1 - alpha; false-discovery rate alpha
    min_delta_pct: float = 5.0
    # Fewer pairs: no verdict. Two pairs cannot show the spread across runs: on runs of one
    # process (tests/unit/harness/test_harness_compare.py's model, 60 seeds x 4 metrics)
    # 10% of the metrics were called better or worse with 2 pairs, 3.8% with 3, 0.4% with 4.
    min_pairs: int = 3


class _Resampled:
    """One run's block-bootstrap counts, drawn once and shared by all its metrics:
    (pairs, resamples, seconds), one independent set per draw slot of a replicate."""

    def __init__(self, run: RunSamples, slots: int, p: CompareParams, seed: Sequence[int]):
        self.run, self.slots = run, slots
        rng = np.random.default_rng(list(seed))
        self.counts = block_counts(run.n_seconds, slots * p.resamples, rng, p.block_s)

    def statistic(self, source: str, name: str, resamples: int) -> tuple[float, np.ndarray]:
        """The run's own value, and (slots, resamples) values over its resamples."""
        samples = self.run.sources.get(source)
        if samples is None or samples.values.size == 0:
            return np.nan, np.full((self.slots, resamples), np.nan)
        stat = STATISTICS[name]
        own = stat(Weighted(samples, np.ones((1, self.run.n_seconds), int)))[0]
        replicates = stat(Weighted(samples, self.counts)).reshape(self.slots, resamples)
        return float(own), replicates


def _interval(values: np.ndarray, alpha: float) -> tuple[float | None, float | None]:
    """Percentile interval; indexes the sorted values, so infinite ends stay infinite."""
    values = np.sort(values[~np.isnan(values)])
    if values.size == 0:
        return None, None
    lo = values[int(np.floor(alpha / 2 * (values.size - 1)))]
    hi = values[int(np.ceil((1 - alpha / 2) * (values.size - 1)))]
    return num(lo), num(hi)


def _relative(diff: np.ndarray, base: np.ndarray) -> np.ndarray:
    # From zero any change is infinitely large; no change is no change.
    with np.errstate(invalid="ignore", divide="ignore"):
        rel = diff / np.abs(base) * 100.0
        from_zero = np.where(diff == 0, 0.0, np.sign(diff) * np.inf)
    return np.where(base == 0, from_zero, rel)


def _metric(
    a_runs: list[tuple[float, np.ndarray]],
    b_runs: list[tuple[float, np.ndarray]],
    p: CompareParams,
    seed: int,
) -> dict[str, Any]:
    """delta%, its interval and the bootstrap p-value of one metric over paired runs."""
    kept = [
        (a, b)
        for a, b in zip(a_runs, b_runs, strict=True)
        if np.isfinite(a[0]) and np.isfinite(b[0])
    ]
    result: dict[str, Any] = {
        "a": num(np.median([a[0] for a, _ in kept])) if kept else None,
        "b": num(np.median([b[0] for _, b in kept])) if kept else None,
        "n_pairs": len(kept),
        "delta_pct": None,
        "ci_pct": [None, None],
        "diff": None,
        "ci_diff": [None, None],
        "p_value": None,
    }
    if not kept:
        return result
    a, b = result["a"], result["b"]
    result["diff"] = num(b - a)
    result["delta_pct"] = num(float(_relative(np.array(b - a), np.array(a))))
    if len(kept) < p.min_pairs:
        return result
    rng = np.random.default_rng([p.seed, seed])
    m = len(kept)
    draws = rng.integers(0, m, size=(p.resamples, m))  # pairs drawn for each replicate
    slot = np.arange(m)[None, :]
    replicate = np.arange(p.resamples)[:, None]

    def medians(side: int) -> np.ndarray:
        stacked = np.stack([pair[side][1][:m] for pair in kept])  # (pairs, slots, resamples)
        return np.nanmedian(stacked[draws, slot, replicate], axis=1)

    with warnings.catch_warnings():
        # A replicate whose drawn runs all lack the statistic (NaN) is dropped below.
        warnings.simplefilter("ignore", RuntimeWarning)
        a_star, b_star = medians(0), medians(1)
    diff = b_star - a_star
    ok = ~np.isnan(diff)
    if not ok.any():
        return result
    diff = diff[ok]
    result["ci_diff"] = list(_interval(diff, p.alpha))
    if a != 0:
        result["ci_pct"] = list(_interval(_relative(diff, a_star[ok]), p.alpha))
    # Two-sided percentile-bootstrap p-value (+1: a finite number of replicates never
    # proves p = 0); all replicates equal to zero give p = 1.
    n = diff.size
    tail = min(np.sum(diff <= 0), np.sum(diff >= 0))
    result["p_value"] = num(min(1.0, 2 * (tail + 1) / (n + 1)))
    return result


def _verdicts(
    results: Sequence[dict[str, dict[str, Any]]],
    directions: Mapping[str, Direction],
    p: CompareParams,
) -> None:
    """Benjamini-Hochberg over every metric of every pair that has a p-value (one family:
    a comparison of three variants tests each metric three times), then each verdict."""
    tested = [(r, k) for r in results for k in r if r[k]["p_value"] is not None]
    q = false_discovery_control([r[k]["p_value"] for r, k in tested]) if tested else []
    for r in (row for pair in results for row in pair.values()):
        # "-": a side has no value at all (nothing measured it), so there is nothing to judge.
        measured = r.get("a") is not None and r.get("b") is not None
        r["q_value"], r["verdict"] = None, "same" if measured else "-"
    for (pair, key), q_value in zip(tested, q, strict=True):
        r = pair[key]
        r["q_value"] = num(q_value)
        lo, hi = r["ci_diff"]
        excludes_zero = lo is not None and hi is not None and (lo > 0 or hi < 0)
        delta = r["delta_pct"]
        large = delta is None or abs(delta) >= p.min_delta_pct
        if excludes_zero and large and q_value < p.alpha:
            improved = (r["diff"] > 0) == (directions[key] == "higher")
            r["verdict"] = "better" if improved else "worse"


def _pair(
    runs_a: Sequence[RunSamples],
    runs_b: Sequence[RunSamples],
    metrics: Mapping[str, tuple[str, str]],
    p: CompareParams,
) -> dict[str, dict[str, Any]]:
    m = min(len(runs_a), len(runs_b))
    resampled = [
        [_Resampled(run, m, p, (p.seed, side, i)) for i, run in enumerate(runs[:m])]
        for side, runs in enumerate((runs_a, runs_b))
    ]
    results = {}
    for key, (source, statistic) in metrics.items():
        a_runs, b_runs = (
            [r.statistic(source, statistic, p.resamples) for r in side] for side in resampled
        )
        results[key] = _metric(a_runs, b_runs, p, zlib.crc32(key.encode()))
    return results


def compare_variants(
    runs: Mapping[str, Sequence[RunSamples]],
    pairs: Sequence[tuple[str, str]],
    metrics: Mapping[str, tuple[str, str]] = COMPARED,
    params: CompareParams | None = None,
    directions: Mapping[str, Direction] = DIRECTIONS,
) -> list[dict[str, dict[str, Any]]]:
    """For each pair (A, B) of variant names, B against A for every metric, over the
    repetitions paired in order (A[i] with B[i]; extra runs of one side have no partner and
    are left out), with the false-discovery rate controlled across all pairs' metrics.

    Each metric's row: a, b (medians of the runs), n_pairs, delta_pct (B against A),
    ci_pct (its 1 - alpha interval), diff = b - a and ci_diff (the interval of the
    difference; the one that counts when a is 0), p_value (bootstrap, two-sided), q_value
    (Benjamini-Hochberg), verdict (better | worse | same, by DIRECTIONS; - where a side
    has no value at all).
    """
    p = params or CompareParams()
    results = [_pair(runs[a], runs[b], metrics, p) for a, b in pairs]
    _verdicts(results, directions, p)
    return results


def compare_runs(
    runs_a: Sequence[RunSamples],
    runs_b: Sequence[RunSamples],
    metrics: Mapping[str, tuple[str, str]] = COMPARED,
    params: CompareParams | None = None,
    directions: Mapping[str, Direction] = DIRECTIONS,
) -> dict[str, dict[str, Any]]:
    """B against A (compare_variants with one pair)."""
    (result,) = compare_variants(
        {"a": runs_a, "b": runs_b}, [("a", "b")], metrics, params, directions
    )
    return result


def metric_at(metrics: Mapping[str, Any], dotted: str) -> float | None:
    """The value at `throughput_rows_per_s.p5` in a result.json `metrics` dict, if any."""
    node: Any = metrics
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return num(node) if isinstance(node, int | float) else None
