"""History -> the `metrics` dict of result.json (names per DESIGN.md; more may be added)."""

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from harness.metrics.buckets import Buckets
from harness.metrics.faults import RecoveryParams, bucket_labels, fault_recovery, fault_windows
from harness.metrics.history import Records, as_frame, of_kind, run_window
from harness.metrics.lag import freshness_per_bucket, series_stats
from harness.metrics.latency import (
    commit_cadence_s,
    commit_latency_ms,
    instant_request_ms,
    instant_waits_ms,
    writer_blocked_ms_per_s,
)
from harness.metrics.stats import percentiles
from harness.metrics.throughput import stalls, throughput_stats, visible_rows_per_s


@dataclass(frozen=True)
class MetricParams:
    # DESIGN.md uses 1 s buckets. With checkpoint_interval_s > 1 commits land every other
    # second, so x alternates 0 / 2R; a bucket of one interval shows the smoothness instead.
    bucket_s: float = 1.0
    stall_frac: float = 0.1  # a stall: x_i < stall_frac * median(x)
    recovery: RecoveryParams = field(default_factory=RecoveryParams)


def timeseries(events: Records, params: MetricParams | None = None) -> pd.DataFrame:
    """One row per measured bucket: start_s, rows_per_s (x_i), freshness_s, faults (labels)."""
    params = params or MetricParams()
    ev = as_frame(events)
    window = run_window(ev)
    buckets = Buckets.over(window, params.bucket_s)
    commits = of_kind(ev, "commit")
    return pd.DataFrame(
        {
            "start_s": buckets.starts,
            "rows_per_s": visible_rows_per_s(commits, buckets, window.t0),
            "freshness_s": freshness_per_bucket(commits, buckets, window.t0),
            "faults": bucket_labels(fault_windows(of_kind(ev, "fault")), buckets),
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
    commits_all = of_kind(ev, "commit")
    commits = window.measured(commits_all)
    commit_rel = window.relative(commits_all["t"]) if len(commits_all) else np.empty(0)
    requests = of_kind(ev, "instant_request")
    rows = commits_all["rows"] if "rows" in commits_all else pd.Series(dtype=float)
    return {
        "rows_committed": int(np.nansum(np.asarray(rows, float))),
        "seconds_measured": float(len(buckets) * buckets.width),
        "throughput_rows_per_s": throughput_stats(x),
        "throughput_fault_free_rows_per_s": {
            **throughput_stats(x[fault_free]),
            "seconds": float(fault_free.sum() * buckets.width),
        },
        "stalls": stalls(x, buckets, labels, params.stall_frac),
        "writer_blocked_ms_per_s": writer_blocked_ms_per_s(requests, buckets, window.t0),
        "instant_request_ms": instant_request_ms(window.measured(requests)),
        "commit_latency_ms": commit_latency_ms(commits),
        "commit_cadence_s": commit_cadence_s(commits),
        **instant_waits_ms(window.measured(of_kind(ev, "instant_created"))),
        "freshness_s": percentiles(frame["freshness_s"], ["mean", "p99", "max"]),
        **series_stats(se, window),
        "faults": [
            fault_recovery(w, x, buckets, commit_rel, params.recovery)
            for w in fault_windows(of_kind(ev, "fault"))
        ],
    }
