"""Visible rows per bucket (x_i), throughput statistics and stalls."""

from typing import Any

import numpy as np

from harness.metrics.buckets import Buckets
from harness.metrics.stats import num, percentiles, ratio

_MAX_LISTED_STALLS = 50


def visible_rows_per_s(commits: Any, buckets: Buckets, t0: float) -> np.ndarray:
    """x_i: rows made visible by commits in bucket i, as rows per second."""
    if len(commits) == 0:
        return np.zeros(len(buckets))
    rows = np.nan_to_num(np.asarray(commits["rows"], float))
    return buckets.total(np.asarray(commits["t"], float) - t0, rows) / buckets.width


def throughput_stats(x: np.ndarray) -> dict[str, float | None]:
    """mean, p1, p5, p50, p99, cv = stdev/mean (population), floor_ratio = p5/p50."""
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
    if len(x) == 0:
        return {"count": 0, "total_s": 0.0, "longest_s": 0.0, "runs": []}
    low = x < frac * np.median(x)
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
