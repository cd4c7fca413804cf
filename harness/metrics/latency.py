"""Per-event latencies of the write protocol: instant requests, commits, cadence, waits."""

import numpy as np
import pandas as pd

from harness.metrics.buckets import Buckets
from harness.metrics.stats import percentiles, ratio


def _column(frame: pd.DataFrame, name: str) -> np.ndarray:
    return np.asarray(frame[name], float) if name in frame and len(frame) else np.empty(0)


def instant_request_ms(requests: pd.DataFrame) -> dict[str, float | None]:
    return percentiles(_column(requests, "latency_ms"), ["p50", "p99"])


def commit_latency_ms(commits: pd.DataFrame) -> dict[str, float | None]:
    """ACK received -> completed instant written."""
    return percentiles(_column(commits, "latency_ms"), ["p50", "p99", "max"])


def commit_cadence_s(commits: pd.DataFrame) -> dict[str, float | None]:
    """Gaps between consecutive commits; jitter = p99/p50 (1 = a perfectly even beat)."""
    gaps = np.diff(np.sort(_column(commits, "t")))
    stats = percentiles(gaps, ["p50", "p99", "max"])
    stats["jitter"] = ratio(stats["p99"], stats["p50"])
    return stats


def instant_waits_ms(created: pd.DataFrame) -> dict[str, dict[str, float | None]]:
    """TrueTime sleep and lock wait paid by each new instant."""
    return {
        "truetime_sleep_ms": percentiles(_column(created, "truetime_sleep_ms"), ["p50", "p99"]),
        "lock_wait_ms": percentiles(_column(created, "lock_wait_ms"), ["p50", "p99"]),
    }


def blocked_ms_per_bucket(requests: pd.DataFrame, buckets: Buckets, t0: float) -> np.ndarray:
    """Milliseconds per second that writers (summed) spent waiting for their instant:
    the whole wait a writer saw (`latency_ms`), which in blocking mode includes waiting for
    earlier commits (the coordinator's part of it is `blocked_ms`).

    A request reports its wait when it ends; the wait is spread back over the seconds it
    covered, so a 3 s block shows as 3 blocked seconds, not one 3000 ms spike.
    """
    if len(buckets) == 0:
        return np.zeros(0)
    blocked_s = np.nan_to_num(_column(requests, "latency_ms")) / 1000.0
    ends = _column(requests, "t") - t0
    return buckets.overlap(ends - blocked_s, ends) * 1000.0 / buckets.width
