"""How far behind the table is: freshness, pending instants, backlog."""

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from harness.metrics.buckets import Buckets
from harness.metrics.history import RunWindow
from harness.metrics.stats import num, percentiles

# Freshness is a sawtooth: it grows by a second every second and drops at each commit.
# Read once a second it aliases (with a 1 s commit cadence every reading sees the same
# phase), so it is read on this grid instead: every phase of any cadence is seen, to 10 ms.
FRESHNESS_STEP_S = 0.01


@dataclass(frozen=True)
class Freshness:
    """now - event time of the newest visible row, on a 10 ms grid over the measured
    window (NaN before the first commit: nothing visible yet means no freshness to report),
    and its peaks: the value just before each commit in the window and at the window's end."""

    values: np.ndarray
    bucket: np.ndarray  # the measured bucket each grid value falls in
    peaks: np.ndarray

    def per_bucket(self, n_buckets: int) -> np.ndarray:
        """The time-weighted mean of each bucket (NaN where nothing was visible)."""
        ok = np.isfinite(self.values)
        total = np.bincount(self.bucket[ok], weights=self.values[ok], minlength=n_buckets)
        count = np.bincount(self.bucket[ok], minlength=n_buckets)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(count > 0, total / np.maximum(count, 1), np.nan)

    def stats(self) -> dict[str, float | None]:
        """mean and p99 weighted by time; max, the highest peak."""
        out = percentiles(self.values, ["mean", "p99"])
        peaks = self.peaks[np.isfinite(self.peaks)]
        out["max"] = num(peaks.max()) if peaks.size else None
        return out


def freshness(commits: pd.DataFrame, buckets: Buckets, t0: float) -> Freshness:
    """The freshness curve from the commit record (each commit's time and the newest event
    time it made visible), read on the grid and at its peaks."""
    per_bucket = max(round(buckets.width / FRESHNESS_STEP_S), 1)
    step = buckets.width / per_bucket
    grid = (np.arange(len(buckets) * per_bucket) + 0.5) * step  # cell midpoints
    bucket = np.arange(grid.size) // per_bucket
    start = buckets.starts[0] if len(buckets) else 0.0
    now = t0 + start + grid
    end = t0 + start + len(buckets) * buckets.width
    if len(commits) == 0 or "max_event_time" not in commits:
        return Freshness(np.full(grid.size, np.nan), bucket, np.empty(0))
    order = np.argsort(np.asarray(commits["t"], float), kind="stable")
    times = np.asarray(commits["t"], float)[order]
    newest = np.fmax.accumulate(np.asarray(commits["max_event_time"], float)[order])

    def at(points: np.ndarray, side: Literal["left", "right"]) -> np.ndarray:
        n = np.searchsorted(times, points, side=side)
        seen = np.where(n > 0, newest[np.maximum(n - 1, 0)], np.nan)
        return points - seen

    inside = times[(times > t0 + start) & (times <= end)]
    peaks = at(np.append(inside, end), "left")  # "left": the commit not visible yet
    return Freshness(at(now, "right"), bucket, peaks)


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
