"""Per-second samples of one run: what a comparison resamples (harness.metrics.compare).

Every sample belongs to one measured second. A per-second series has one sample a second
(freshness: its readings every 10 ms, harness.metrics.lag); per-event values (an instant
request's latency, a commit's latency, the gap before a commit) belong to the second they
ended in, so resampling seconds resamples them too.
"""

from dataclasses import dataclass

import numpy as np

from harness.history_events import Kind
from harness.metrics.buckets import Buckets
from harness.metrics.compute import MetricParams, timeseries
from harness.metrics.history import Records, as_frame, of_kind, run_window
from harness.metrics.lag import freshness


@dataclass(frozen=True)
class Samples:
    values: np.ndarray  # finite values only
    second: np.ndarray  # the measured second (0 .. n_seconds-1) of each value


@dataclass(frozen=True)
class RunSamples:
    n_seconds: int
    sources: dict[str, Samples]


# Per-second series (columns of timeseries()) and per-event sources.
SERIES = ("rows_per_s", "ingest_rows_per_s", "writer_blocked_ms_per_s", "freshness_s")
EVENTS = ("instant_request_ms", "commit_latency_ms", "commit_gap_s")


def _samples(values: np.ndarray, second: np.ndarray) -> Samples:
    keep = np.isfinite(values) & (second >= 0)
    return Samples(np.asarray(values, float)[keep], np.asarray(second, int)[keep])


def run_samples(events: Records, params: MetricParams | None = None) -> RunSamples:
    """The samples behind the metrics of compute_metrics(), for the same history: a
    statistic over all of them (each once) is the run's value in result.json."""
    params = params or MetricParams()
    ev = as_frame(events)
    window = run_window(ev)
    buckets = Buckets.over(window, params.bucket_s)
    frame = timeseries(ev, params)
    seconds = np.arange(len(frame))
    sources = {name: _samples(frame[name].to_numpy(float), seconds) for name in SERIES}
    # Freshness on its 10 ms grid (harness.metrics.lag), not its per-second means: the
    # run's p99 is of those readings, so its resamples must be too.
    curve = freshness(of_kind(ev, Kind.COMMIT), buckets, window.t0)
    sources["freshness_s"] = _samples(curve.values, curve.bucket)

    def per_event(kind: Kind, column: str) -> Samples:
        found = window.measured(of_kind(ev, kind))
        if column not in found or not len(found):
            return _samples(np.empty(0), np.empty(0, int))
        at = buckets.index(window.relative(found["t"]))
        return _samples(np.asarray(found[column], float), at)

    sources["instant_request_ms"] = per_event(Kind.INSTANT_REQUEST, "latency_ms")
    sources["commit_latency_ms"] = per_event(Kind.COMMIT, "latency_ms")
    commits = window.measured(of_kind(ev, Kind.COMMIT))
    times = np.sort(window.relative(commits["t"])) if len(commits) else np.empty(0)
    sources["commit_gap_s"] = _samples(np.diff(times), buckets.index(times[1:]))
    return RunSamples(len(frame), sources)
