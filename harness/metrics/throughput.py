"""Rows per second (x_i, DESIGN.md "Metrics"), throughput statistics and stalls."""

from typing import Any

import numpy as np
import pandas as pd

from harness.metrics.buckets import Buckets
from harness.metrics.stats import clean, num, percentiles, ratio

_MAX_LISTED_STALLS = 50


def spread_rows_per_s(
    rel_t: np.ndarray,
    rows: np.ndarray,
    buckets: Buckets,
    cap_s: float,
    groups: np.ndarray | None = None,
) -> np.ndarray:
    """Rows per second in each bucket, each event's rows spread evenly over the time since
    the previous event of its group, but over at most `cap_s` (one checkpoint interval)
    before it.

    Counting each commit in the bucket it lands in aliases: a steady 1 s cadence whose
    commits sit on the bucket edges reads as 0, 2x, 0, 2x. Spread over the interval it
    covers, a steady cadence reads steady at any phase, and a stall still reads as empty
    seconds: the cap keeps the rows of the commit that ends a stall out of the stall.

    The stream after the last event is only judged once a whole `cap_s` has passed without
    one: a shorter tail at the end of the window is the next event not due yet, so a bucket
    cut by it is the rate over its judged part (NaN if none of it is judged).
    """
    rel_t, rows = np.asarray(rel_t, float), np.nan_to_num(np.asarray(rows, float))
    if len(buckets) == 0 or len(rel_t) == 0:
        return np.zeros(len(buckets))
    keys = np.zeros(len(rel_t)) if groups is None else pd.factorize(np.asarray(groups))[0]
    order = np.lexsort((rel_t, keys))
    t, r, g = rel_t[order], rows[order], keys[order]
    previous = np.concatenate([[-np.inf], t[:-1]])
    previous[np.concatenate([[True], g[1:] != g[:-1]])] = -np.inf
    begins = np.maximum(previous, t - cap_s)
    span = t - begins
    spread = span > 0
    totals = buckets.overlap(begins[spread], t[spread], r[spread] / span[spread])
    # Events at the same moment as their predecessor have no span: counted where they land.
    totals += buckets.total(t[~spread], r[~spread])
    judged_until = t.max() if buckets.ends[-1] - t.max() <= cap_s else np.inf
    judged = np.clip(np.minimum(buckets.ends, judged_until) - buckets.starts, 0.0, buckets.width)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(judged > 0, totals / judged, np.nan)


def visible_rows_per_s(
    commits: pd.DataFrame, buckets: Buckets, t0: float, cap_s: float
) -> np.ndarray:
    """x_i: rows made visible per second, each commit's rows spread over the time since the
    previous commit (at most one checkpoint interval)."""
    if len(commits) == 0:
        return np.zeros(len(buckets))
    return spread_rows_per_s(
        np.asarray(commits["t"], float) - t0, np.asarray(commits["rows"], float), buckets, cap_s
    )


def ingest_rows_per_s(
    flushes: pd.DataFrame, buckets: Buckets, t0: float, cap_s: float
) -> np.ndarray:
    """Rows the writer tasks wrote per second: each flush's rows spread over the time since
    the same task's previous flush (at most one checkpoint interval). Every attempt counts:
    a retried task's rows were written twice."""
    if len(flushes) == 0 or "rows" not in flushes:
        return np.zeros(len(buckets))
    task = flushes["task"] if "task" in flushes else flushes.get("src")
    return spread_rows_per_s(
        np.asarray(flushes["t"], float) - t0,
        np.asarray(flushes["rows"], float),
        buckets,
        cap_s,
        None if task is None else np.asarray(task).astype(str),
    )


def spread_cap_s(run_start_interval: float | None, commit_times: np.ndarray) -> float:
    """One checkpoint interval: as the run recorded it, else the commits' median gap (a
    history from before run_start carried it), else 1 s."""
    if run_start_interval is not None and np.isfinite(run_start_interval):
        return float(run_start_interval)
    gaps = np.diff(np.sort(clean(commit_times)))
    gaps = gaps[gaps > 0]
    return float(np.median(gaps)) if len(gaps) else 1.0


def throughput_stats(x: np.ndarray) -> dict[str, float | None]:
    """mean, p1, p5, p50, p99, cv = stdev/mean (population), floor_ratio = p5/p50.
    Seconds not judged yet (NaN) are left out."""
    x = clean(x)
    stats = percentiles(x, ["mean", "p1", "p5", "p50", "p99"])
    std = num(np.std(x)) if len(x) else None
    stats["cv"] = ratio(std, stats["mean"])
    stats["floor_ratio"] = ratio(stats["p5"], stats["p50"])
    return stats


def stalls(
    x: np.ndarray, buckets: Buckets, labels: list[list[str]], frac: float = 0.1
) -> dict[str, Any]:
    """Runs of buckets with x_i < frac * median(x): count, total_s, longest_s, and the runs
    with the faults active in them, so a reader can see what each stall coincided with."""
    if len(clean(x)) == 0:
        return {"count": 0, "total_s": 0.0, "longest_s": 0.0, "runs": []}
    low = np.nan_to_num(x, nan=np.inf) < frac * np.median(clean(x))
    # Run boundaries: where `low` switches on and off (padded so edge runs close).
    padded = np.concatenate([[False], low, [False]]).astype(int)
    on = np.flatnonzero(np.diff(padded) == 1)
    off = np.flatnonzero(np.diff(padded) == -1)
    lengths = (off - on) * buckets.width
    runs = [
        {
            "start_s": float(buckets.starts[a]),
            "length_s": float(length),
            "faults": sorted({f for i in range(a, b) for f in labels[i]}),
        }
        for a, b, length in zip(on, off, lengths, strict=True)
    ]
    return {
        "count": len(runs),
        "total_s": float(lengths.sum()),
        "longest_s": float(lengths.max()) if len(runs) else 0.0,
        "runs": runs[:_MAX_LISTED_STALLS],
    }
