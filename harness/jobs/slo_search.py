"""The capacity search: which offered rates hold the SLO, for each writer count and
checkpoint interval, and the plain-words recommendation. Pure: runs come in as results."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

from harness.metrics import metric_at

# No growing backlog: a least-squares slope of the backlog below 2% of the offered rate
# per second. A keeping-up pipeline's backlog saw-tooths around a level (slope ~ 0, either
# sign); one that sustains 95% of the offered rate grows at 5% of it.
DEFAULT_BACKLOG_GROWTH = 0.02
# Batch writers: the largest user count whose conflict rate stays below this is advised.
MAX_CONFLICT_RATE = 0.10


@dataclass(frozen=True)
class SloSpec:
    freshness_p99_s: float | None
    backlog_growth: float = DEFAULT_BACKLOG_GROWTH


@dataclass(frozen=True)
class Config:
    writers: int
    interval_s: float


@dataclass
class Point:
    rate: float
    writers: int
    interval_s: float
    verdict: str
    holds: bool
    reason: str
    freshness_p99_s: float | None = None
    backlog_slope: float | None = None
    throughput_mean: float | None = None
    run_id: str | None = None
    run_dir: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def judge_point(rate: float, config: Config, result: dict[str, Any], slo: SloSpec) -> Point:
    """Does one run at `rate` hold the SLO? Missing numbers never hold (fail closed)."""
    metrics = result.get("metrics") or {}
    point = Point(
        rate,
        config.writers,
        config.interval_s,
        result.get("verdict", "unknown"),
        holds=False,
        reason="",
        freshness_p99_s=metric_at(metrics, "freshness_s.p99"),
        backlog_slope=metric_at(metrics, "backlog_rows.slope"),
        throughput_mean=metric_at(metrics, "throughput_rows_per_s.mean"),
        run_id=result.get("run_id"),
        run_dir=result.get("run_dir"),
    )
    max_slope = slo.backlog_growth * rate
    if point.verdict != "valid":
        error = result.get("error")
        point.reason = f"verdict {point.verdict}" + (f": {error}" if error else "")
    elif slo.freshness_p99_s is not None and point.freshness_p99_s is None:
        point.reason = "no freshness measured"
    elif (
        slo.freshness_p99_s is not None
        and point.freshness_p99_s is not None
        and point.freshness_p99_s > slo.freshness_p99_s
    ):
        point.reason = (
            f"freshness p99 {point.freshness_p99_s:.1f} s > SLO {slo.freshness_p99_s:g} s"
        )
    elif point.backlog_slope is None:
        point.reason = "no backlog measured"
    elif point.backlog_slope > max_slope:
        point.reason = (
            f"backlog grows {point.backlog_slope:,.0f} rows/s each second "
            f"(> {max_slope:,.0f}: {slo.backlog_growth:.0%} of the rate)"
        )
    else:
        point.holds, point.reason = True, "holds"
    return point


def sweep(
    configs: Iterable[Config],
    rates: Iterable[float],
    run: Callable[[float, Config], dict[str, Any]],
    slo: SloSpec,
) -> list[Point]:
    """For each config, the rates in increasing order until the first one that fails: a
    pipeline that cannot hold a rate will not hold a higher one, and each run costs ~30 s."""
    points = []
    ordered = sorted(set(rates))
    for config in configs:
        for rate in ordered:
            point = judge_point(rate, config, run(rate, config), slo)
            points.append(point)
            if not point.holds:
                break
    return points


def best_point(points: list[Point]) -> Point | None:
    """The highest holding rate; among equals, fewer writers, then the fresher."""
    holding = [p for p in points if p.holds]
    if not holding:
        return None
    return max(holding, key=lambda p: (p.rate, -p.writers, -(p.freshness_p99_s or 0.0)))


def recommendation(points: list[Point], slo: SloSpec, cluster: str) -> str:
    best = best_point(points)
    if best is None:
        target = (
            f"freshness p99 <= {slo.freshness_p99_s:g} s and no growing backlog"
            if slo.freshness_p99_s is not None
            else "no growing backlog"
        )
        lowest = min((p.rate for p in points), default=0)
        return (
            f"No tested rate holds the SLO ({target}) on this cluster ({cluster}); the lowest "
            f"tried was {lowest:,.0f} rows/s. Test lower rates or relax the SLO."
        )
    slo_text = "" if slo.freshness_p99_s is None else f" (SLO {slo.freshness_p99_s:g} s)"
    text = (
        f"At most {best.rate:,.0f} rows/s with checkpoint interval {best.interval_s:g} s and "
        f"{best.writers} writer(s) on this cluster ({cluster}): freshness p99 "
        f"{_num(best.freshness_p99_s)} s{slo_text} and no growing backlog."
    )
    tried_higher = any(
        p.rate > best.rate
        for p in points
        if (p.writers, p.interval_s) == (best.writers, best.interval_s)
    )
    if not tried_higher:
        text += " That was the highest rate tried: the limit may be higher; extend the rates."
    return text


def contention_advice(stages: list[dict[str, Any]]) -> str | None:
    """The largest user count whose conflict rate stays under MAX_CONFLICT_RATE."""
    measured = [s for s in stages if s.get("conflict_rate") is not None]
    if not measured:
        return None
    ok = [s for s in measured if s["conflict_rate"] < MAX_CONFLICT_RATE]
    worst = max(measured, key=lambda s: s["users"])
    tail = (
        f"at {worst['users']} writers {worst['conflict_rate']:.0%} of commits conflict "
        f"(p99 commit latency {_num(worst['latency_ms'].get('p99'))} ms)"
    )
    if not ok:
        return f"Every tested number of concurrent batch writers conflicts on 10% or more: {tail}."
    top = max(ok, key=lambda s: s["users"])
    return (
        f"At most {top['users']} concurrent batch writer(s) keep the conflict rate under "
        f"{MAX_CONFLICT_RATE:.0%} ({top['conflict_rate']:.0%}); {tail}."
    )


def _num(x: float | None) -> str:
    return "?" if x is None else f"{x:,.1f}"
