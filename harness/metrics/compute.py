"""History -> the `metrics` dict of result.json (names per DESIGN.md; more may be added)."""

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from harness.history_events import Kind
from harness.metrics.buckets import Buckets
from harness.metrics.faults import RecoveryParams, bucket_labels, fault_recovery, fault_windows
from harness.metrics.history import Records, as_frame, of_kind, run_window
from harness.metrics.lag import freshness, series_stats
from harness.metrics.latency import (
    blocked_ms_per_bucket,
    commit_cadence_s,
    commit_latency_ms,
    instant_request_ms,
    instant_waits_ms,
)
from harness.metrics.stats import percentiles
from harness.metrics.throughput import (
    ingest_rows_per_s,
    spread_cap_s,
    stalls,
    throughput_stats,
    visible_rows_per_s,
)


@dataclass(frozen=True)
class MetricParams:
    bucket_s: float = 1.0  # DESIGN.md: 1-second buckets
    stall_frac: float = 0.1  # a stall: x_i < stall_frac * median(x)
    recovery: RecoveryParams = field(default_factory=RecoveryParams)
    # How far back a commit's (a flush's) rows are spread: one checkpoint interval. None:
    # as the history's run_start recorded it (see throughput.spread_cap_s).
    checkpoint_interval_s: float | None = None


def _spread_cap_s(ev: pd.DataFrame, params: MetricParams) -> float:
    if params.checkpoint_interval_s is not None:
        return params.checkpoint_interval_s
    start = of_kind(ev, Kind.RUN_START)
    recorded = start["checkpoint_interval_s"].iloc[0] if "checkpoint_interval_s" in start else None
    commits = of_kind(ev, Kind.COMMIT)
    interval = None if recorded is None or pd.isna(recorded) else float(recorded)
    return spread_cap_s(interval, commits.get("t", []))


def timeseries(events: Records, params: MetricParams | None = None) -> pd.DataFrame:
    """One row per measured bucket: start_s, rows_per_s (x_i: rows made visible per second),
    ingest_rows_per_s (rows the writers wrote per second), writer_blocked_ms_per_s,
    freshness_s, faults (labels). rows_per_s is NaN in a last bucket not judged yet."""
    params = params or MetricParams()
    ev = as_frame(events)
    window = run_window(ev)
    buckets = Buckets.over(window, params.bucket_s)
    commits = of_kind(ev, Kind.COMMIT)
    cap = _spread_cap_s(ev, params)
    requests = of_kind(ev, Kind.INSTANT_REQUEST)
    return pd.DataFrame(
        {
            "start_s": buckets.starts,
            "rows_per_s": visible_rows_per_s(commits, buckets, window.t0, cap),
            "ingest_rows_per_s": ingest_rows_per_s(
                of_kind(ev, Kind.FLUSH), buckets, window.t0, cap
            ),
            "writer_blocked_ms_per_s": blocked_ms_per_bucket(requests, buckets, window.t0),
            "freshness_s": freshness(commits, buckets, window.t0).per_bucket(len(buckets)),
            "faults": bucket_labels(fault_windows(of_kind(ev, Kind.FAULT)), buckets),
        }
    )


def compute_metrics(
    events: Records, series: Records = (), params: MetricParams | None = None
) -> dict[str, Any]:
    """All metrics of one run. Warm-up is excluded from every statistic except rows_committed,
    which counts every committed row of the run."""
    params = params or MetricParams()
    ev, se = as_frame(events), as_frame(series)
    window = run_window(ev)
    buckets = Buckets.over(window, params.bucket_s)
    frame = timeseries(ev, params)
    x = frame["rows_per_s"].to_numpy()
    labels = list(frame["faults"])
    fault_free = np.array([not active for active in labels], bool)
    commits_all = of_kind(ev, Kind.COMMIT)
    commits = window.measured(commits_all)
    commit_rel = window.relative(commits_all["t"]) if len(commits_all) else np.empty(0)
    requests = of_kind(ev, Kind.INSTANT_REQUEST)
    rows = commits_all["rows"] if "rows" in commits_all else pd.Series(dtype=float)
    return {
        "rows_committed": int(np.nansum(np.asarray(rows, float))),
        "seconds_measured": float(len(buckets) * buckets.width),
        "throughput_rows_per_s": throughput_stats(x),
        "ingest_rows_per_s": throughput_stats(frame["ingest_rows_per_s"].to_numpy()),
        "throughput_fault_free_rows_per_s": {
            **throughput_stats(x[fault_free]),
            "seconds": float(fault_free.sum() * buckets.width),
        },
        "stalls": stalls(x, buckets, labels, params.stall_frac),
        "writer_blocked_ms_per_s": percentiles(frame["writer_blocked_ms_per_s"], ["mean", "p99"]),
        "instant_request_ms": instant_request_ms(window.measured(requests)),
        "commit_latency_ms": commit_latency_ms(commits),
        "commit_cadence_s": commit_cadence_s(commits),
        **instant_waits_ms(window.measured(of_kind(ev, Kind.INSTANT_CREATED))),
        "freshness_s": freshness(commits_all, buckets, window.t0).stats(),
        **series_stats(se, window),
        "faults": [
            fault_recovery(w, x, buckets, commit_rel, params.recovery)
            for w in fault_windows(of_kind(ev, Kind.FAULT))
        ],
    }
