"""Fault windows from the history, bucket tags, and per-fault dip / deficit / recovery."""

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from harness.metrics.buckets import Buckets
from harness.metrics.stats import clean, num


@dataclass(frozen=True)
class FaultWindow:
    kind: str
    target: str | None
    start_s: float  # seconds since run start
    end_s: float | None  # None: an instantaneous fault (a crash)
    applied: bool

    @property
    def label(self) -> str:
        """`clock_skew(coordinator)@40s`: how stalls and buckets name the fault."""
        who = f"({self.target})" if self.target else ""
        return f"{self.kind}{who}@{self.start_s:g}s"

    def active_until(self, width: float) -> float:
        """End of the active span; an instantaneous fault marks only the bucket it hit."""
        if self.end_s is not None and self.end_s > self.start_s:
            return self.end_s
        return self.start_s + width * 1e-6


def fault_windows(fault_events: pd.DataFrame) -> list[FaultWindow]:
    windows = []
    for _, event in fault_events.iterrows():
        end = event.get("end_s")
        target = event.get("target")
        windows.append(
            FaultWindow(
                kind=str(event["fault_kind"]),
                target=None if pd.isna(target) else str(target),
                start_s=float(event["start_s"]),
                end_s=None if end is None or pd.isna(end) else float(end),
                applied=bool(event.get("applied", True)),
            )
        )
    return sorted(windows, key=lambda w: w.start_s)


def bucket_labels(windows: list[FaultWindow], buckets: Buckets) -> list[list[str]]:
    """The labels of the applied faults active in each bucket."""
    labels: list[list[str]] = [[] for _ in range(len(buckets))]
    for w in windows:
        if not w.applied:
            continue
        hit = (buckets.starts < w.active_until(buckets.width)) & (buckets.ends > w.start_s)
        for i in np.flatnonzero(hit):
            labels[i].append(w.label)
    return labels


@dataclass(frozen=True)
class RecoveryParams:
    baseline_s: float = 30.0  # B = median of x over this long before the fault
    after_s: float = 5.0  # the dip is looked for until this long after the fault ends
    recover_s: float = 10.0  # recovered: this long in a row ...
    recover_tol: float = 0.1  # ... with x >= (1 - tol) * B


def fault_recovery(
    w: FaultWindow,
    x: np.ndarray,
    buckets: Buckets,
    commit_times_rel: np.ndarray,
    p: RecoveryParams,
) -> dict[str, Any]:
    """dip, deficit, time to first commit and time to recover for one fault.

    Recovery counts x above B as recovered: catching up on a backlog is health, not a dip.
    The recovery search starts at the deepest point of the dip, so a fault whose effect
    shows a few seconds late is not "recovered" before it hurts. Seconds not judged yet
    (NaN: the end of the run, see throughput.spread_rows_per_s) are neither dip nor recovery.
    """
    starts = buckets.starts
    before = clean(x[(starts >= w.start_s - p.baseline_s) & (starts + buckets.width <= w.start_s)])
    baseline = num(np.median(before)) if len(before) else None
    later = commit_times_rel[commit_times_rel >= w.start_s]
    result: dict[str, Any] = {
        "kind": w.kind,
        "target": w.target,
        "start_s": w.start_s,
        "end_s": w.end_s,
        "applied": w.applied,
        "baseline_rows_per_s": baseline,
        "dip": None,
        "deficit": None,
        "time_to_first_commit_s": num(later.min() - w.start_s) if len(later) else None,
        "time_to_recover_s": None,
    }
    from_k = int(np.searchsorted(starts + buckets.width, w.start_s, side="right"))
    if not baseline or not np.isfinite(x[from_k:]).any():
        return result  # no baseline (fault right after warm-up) or no bucket after the fault
    window_end = (w.end_s if w.end_s is not None else w.start_s) + p.after_s
    dip_k = from_k + max(1, int(np.searchsorted(starts[from_k:], window_end, side="left")))
    dip_x = np.nan_to_num(x[from_k:dip_k], nan=np.inf)
    result["dip"] = num(1 - dip_x.min() / baseline) if np.isfinite(dip_x.min()) else None
    if dip_x.min() >= (1 - p.recover_tol) * baseline:
        recover_k: int | None = from_k  # never left the recovered band
    else:
        recover_k = _recovered_at(x, from_k + int(np.argmin(dip_x)), baseline, buckets.width, p)
    after = x[from_k : recover_k if recover_k is not None else None]
    shortfall = np.maximum(0.0, baseline - clean(after))
    result["deficit"] = num(shortfall.sum() * buckets.width)
    if recover_k is not None:
        result["time_to_recover_s"] = num(max(0.0, starts[recover_k] - w.start_s))
    return result


def _recovered_at(
    x: np.ndarray, from_k: int, baseline: float, width: float, p: RecoveryParams
) -> int | None:
    """First bucket >= from_k that starts `recover_s` of buckets all at >= (1-tol)*B."""
    need = max(1, round(p.recover_s / width))
    ok = (x[from_k:] >= (1 - p.recover_tol) * baseline).astype(int)
    if len(ok) < need:
        return None
    # Windowed sums of `ok`: a window summing to `need` is all-recovered.
    sums = np.convolve(ok, np.ones(need, int), mode="valid")
    hits = np.flatnonzero(sums == need)
    return from_k + int(hits[0]) if len(hits) else None
