"""How far behind the table is: freshness, pending instants, backlog."""

from typing import Any

import numpy as np
import pandas as pd

from harness.metrics.buckets import Buckets
from harness.metrics.history import RunWindow
from harness.metrics.stats import num, percentiles


def freshness_per_bucket(commits: pd.DataFrame, buckets: Buckets, t0: float) -> np.ndarray:
    """At the end of each bucket: now - event time of the newest row committed so far.

    NaN before the first commit (nothing visible yet means no freshness to report).
    """
    if len(commits) == 0 or "max_event_time" not in commits:
        return np.full(len(buckets), np.nan)
    order = np.argsort(np.asarray(commits["t"], float), kind="stable")
    times = np.asarray(commits["t"], float)[order]
    newest = np.fmax.accumulate(np.asarray(commits["max_event_time"], float)[order])
    now = t0 + buckets.ends
    n = np.searchsorted(times, now, side="right")
    seen = np.where(n > 0, newest[np.maximum(n - 1, 0)], np.nan)
    return now - seen


def series_stats(series: pd.DataFrame, window: RunWindow) -> dict[str, Any]:
    """pending_instants {max, mean} and backlog_rows {max, slope (rows/s, > 0: falling behind)}."""
    measured = window.measured(series) if len(series) else series
    pending = measured.get("pending_instants", [])
    out: dict[str, Any] = {"pending_instants": percentiles(pending, ["max", "mean"])}
    if {"source_offset", "committed_offset"} <= set(measured.columns) and len(measured):
        backlog = np.asarray(measured["source_offset"], float) - np.asarray(
            measured["committed_offset"], float
        )
        rel = window.relative(measured["t"])
        ok = np.isfinite(backlog)
        slope = np.polyfit(rel[ok], backlog[ok], 1)[0] if ok.sum() >= 2 else None
        out["backlog_rows"] = {
            "max": num(backlog[ok].max()) if ok.any() else None,
            "slope": num(slope),
        }
    else:
        out["backlog_rows"] = {"max": None, "slope": None}
    return out
