"""Is tonight's value of a metric a regression against its own history?

A robust lookback z-score (as conbench does, with median and MAD instead of mean and SD so
that one odd night in the window does not move the baseline): z = (x - median) / (1.4826 *
MAD) over the last `window` nights of the same series and metric on the same host. A
regression needs all of: enough history (`min_history` nights: a new series or the second
run of one never alarms), |z| >= z_threshold in the bad direction, a relative change >=
min_change (a tiny but very regular change is not worth a red build; asv's `--factor`), and
an absolute change >= the metric's floor (a p99 of 2 ms moving to 3 ms is not news).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

from harness.metrics import DIRECTIONS

Direction = Literal["higher", "lower"]
Status = Literal["regression", "improvement", "ok", "short_history"]

# 1.4826 * MAD estimates the standard deviation of normally distributed noise.
MAD_TO_SD = 1.4826

# The scenario metrics judged every night, with the smallest absolute change that matters.
# Central values, not tails: a 20 s run commits ~10 instants, so its p99 commit latency is
# its slowest commit, and two runs of unchanged code differed 2x on it on a busy machine;
# a slowed storage layer or engine moves the median just as much. Continuous values only:
# a count such as stalls.count flips between 0 and 1 on noise. Every other metric is stored
# and queryable.
SCENARIO_METRICS: dict[str, float] = {
    "throughput_rows_per_s.mean": 0.0,
    "throughput_rows_per_s.p5": 0.0,
    "stalls.total_s": 2.0,
    "writer_blocked_ms_per_s.mean": 20.0,
    "instant_request_ms.p50": 10.0,
    "commit_latency_ms.p50": 10.0,
    "freshness_s.mean": 0.5,
    "backlog_rows.max": 0.0,
}
# pytest-benchmark: the median time per round (its FAQ prefers it on a noisy machine).
BENCHMARK_METRICS: dict[str, tuple[Direction, float]] = {"median": ("lower", 0.0)}


@dataclass(frozen=True)
class DetectorParams:
    window: int = 20
    min_history: int = 5
    z_threshold: float = 5.0
    min_change: float = 0.5


@dataclass(frozen=True)
class Finding:
    series: str
    metric: str
    direction: Direction
    value: float
    status: Status
    n_history: int
    baseline: float | None = None  # the history's median
    spread: float | None = None  # 1.4826 * MAD
    z: float | None = None  # signed: > 0 is the bad direction
    change: float | None = None  # relative to the baseline, signed like z

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def scenario_rules() -> dict[str, tuple[Direction, float]]:
    return {m: (DIRECTIONS[m], floor) for m, floor in SCENARIO_METRICS.items()}


def judge(
    series: str,
    metric: str,
    value: float,
    history: Sequence[float],
    direction: Direction,
    params: DetectorParams = DetectorParams(),
    min_abs_change: float = 0.0,
) -> Finding:
    """Judge `value` against `history` (the previous nights, any order; at most `window`
    of the most recent are expected)."""
    past = np.asarray([h for h in history if h is not None and math.isfinite(h)], float)
    if past.size < params.min_history:
        return Finding(series, metric, direction, value, "short_history", int(past.size))
    baseline = float(np.median(past))
    spread = MAD_TO_SD * float(np.median(np.abs(past - baseline)))
    sign = 1.0 if direction == "lower" else -1.0  # bad = up for lower-is-better
    delta = sign * (value - baseline)
    # A flat history (MAD 0): any change is infinitely unusual; the other bars decide.
    z = _ratio(delta, spread)
    change = _ratio(delta, abs(baseline))
    large = abs(change) >= params.min_change and abs(delta) >= min_abs_change
    status: Status = "ok"
    if large and abs(z) >= params.z_threshold:
        status = "regression" if delta > 0 else "improvement"
    return Finding(
        series,
        metric,
        direction,
        value,
        status,
        int(past.size),
        baseline,
        spread,
        _finite(z),
        _finite(change),
    )


def judge_change(series: str, metric: str, value: float, history: Sequence[float]) -> Finding:
    """A comparison's decision (a code, harness.jobs.nightly_compare.DECISION_CODES) against
    the last night's: any change is flagged as a regression, in either direction (a verdict
    that flips is news the night's reader must see, whichever way it went)."""
    past = [h for h in history if h is not None and math.isfinite(h)]
    if not past:
        return Finding(series, metric, "higher", value, "short_history", 0)
    last = past[-1]
    status: Status = "ok" if value == last else "regression"
    return Finding(series, metric, "higher", value, status, len(past), baseline=last)


def _ratio(num: float, den: float) -> float:
    if num == 0:
        return 0.0
    return num / den if den > 0 else math.copysign(math.inf, num)


def _finite(x: float) -> float | None:
    """JSON and Parquet carry no infinities: None stands for "unbounded"."""
    return x if math.isfinite(x) else None
