"""A run's history as chartable time series, in seconds since run start (run_start `t`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from harness.metrics import timeseries
from reports.rundata import RunData


@dataclass(frozen=True)
class FaultSpan:
    kind: str
    target: str | None
    start_s: float
    end_s: float | None  # None or == start_s: instantaneous (a crash)
    applied: bool
    evidence: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def label(self) -> str:
        # Same shape as harness.metrics fault labels, so stall tags and charts agree.
        who = f"({self.target})" if self.target else ""
        return f"{self.kind}{who}@{self.start_s:g}s"

    @property
    def is_window(self) -> bool:
        return self.end_s is not None and self.end_s > self.start_s


@dataclass(frozen=True)
class InstantSpan:
    instant: str
    requested_s: float
    ended_s: float | None  # completed or rolled back; None: still inflight at the end
    outcome: str  # completed | rolled_back | inflight


@dataclass(frozen=True)
class Timeline:
    warmup_s: float
    end_s: float
    per_second: pd.DataFrame  # start_s, rows_per_s, freshness_s, blocked_ms_per_s
    pending: pd.DataFrame  # elapsed_s, pending_instants
    instants: list[InstantSpan]
    faults: list[FaultSpan]

    @property
    def measured(self) -> pd.DataFrame:
        """The seconds the metrics use: warm-up excluded."""
        return self.per_second[self.per_second["start_s"] >= self.warmup_s]


def _float(value: Any) -> float | None:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if np.isfinite(out) else None


def fault_spans(run: RunData) -> list[FaultSpan]:
    """result.json `faults` (the contract); the fault events if the run died before it."""
    records = run.result.get("faults")
    if not isinstance(records, list):
        records = [
            {**e, "kind": e.get("fault_kind")} for e in run.events if e.get("kind") == "fault"
        ]
    spans = []
    for r in records:
        start = _float(r.get("start_s"))
        if start is None:
            continue
        target = r.get("target")
        spans.append(
            FaultSpan(
                kind=str(r.get("kind") or "fault"),
                target=None if target in (None, "") else str(target),
                start_s=start,
                end_s=_float(r.get("end_s")),
                applied=bool(r.get("applied", True)),
                evidence=r.get("evidence") if isinstance(r.get("evidence"), dict) else {},
            )
        )
    return sorted(spans, key=lambda f: f.start_s)


def _covered_before(points: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """For each edge x: sum of (x - p) over the points p <= x."""
    order = np.sort(points)
    cum = np.concatenate([[0.0], np.cumsum(order)])
    n = np.searchsorted(order, edges, side="right")
    return n * edges - cum[n]


def _blocked_ms_per_s(requests: list[dict], t0: float, n: int) -> np.ndarray:
    """Writer wait (ms, summed over writers) in each second from 0 to n.

    A request logs its wait when it returns, so the wait covers [t - blocked, t]; it is
    spread over the seconds it spans, as the writer_blocked_ms_per_s metric does. The time
    covered up to each second's edge is a difference of cumulative sums, so long runs with
    many requests cost O((requests + seconds) log requests), not requests x seconds.
    """
    ends = np.array([e["t"] - t0 for e in requests], float)
    waits = np.array([_float(e.get("blocked_ms")) or 0.0 for e in requests], float) / 1000.0
    edges = np.arange(n + 1, dtype=float)
    covered = _covered_before(ends - waits, edges) - _covered_before(ends, edges)
    return np.diff(covered) * 1000.0


def _elapsed(sample: dict, t0: float) -> float | None:
    elapsed = _float(sample.get("elapsed_s"))
    t = _float(sample.get("t"))
    return elapsed if elapsed is not None else None if t is None else t - t0


def _pending(series: list[dict], t0: float) -> pd.DataFrame:
    rows = [
        (_elapsed(s, t0), _float(s.get("pending_instants")))
        for s in series
        if _elapsed(s, t0) is not None and _float(s.get("pending_instants")) is not None
    ]
    return pd.DataFrame(rows, columns=["elapsed_s", "pending_instants"])


def _instants(events: list[dict], t0: float) -> list[InstantSpan]:
    requested: dict[str, float] = {}
    ended: dict[str, tuple[float, str]] = {}
    outcomes = {"commit": "completed", "rollback": "rolled_back"}
    for e in events:
        key, kind = e.get("instant"), e.get("kind")
        if key is None:
            continue
        if kind == "instant_created":
            requested.setdefault(str(key), e["t"] - t0)
        elif kind in outcomes:
            ended.setdefault(str(key), (e["t"] - t0, outcomes[kind]))
    spans = [
        InstantSpan(key, start, *ended.get(key, (None, "inflight")))
        for key, start in requested.items()
    ]
    return sorted(spans, key=lambda s: s.requested_s)


def build_timeline(run: RunData) -> Timeline:
    """Raises ValueError when the history has no run_start (there is no time zero)."""
    start = run.run_start
    if start is None:
        raise ValueError("the history has no run_start event")
    t0, warmup = float(start["t"]), float(start.get("warmup_s") or 0.0)
    # timeseries() covers the measured window only; the report also shows the warm-up, so
    # it gets a copy of the history whose warm-up is folded into the measured duration.
    whole = dict(start, warmup_s=0.0, duration_s=warmup + float(start.get("duration_s") or 0.0))
    frame = timeseries([whole if e is start else e for e in run.events])
    frame = frame.drop(columns=["faults"])
    requests = [e for e in run.events if e.get("kind") == "instant_request"]
    frame["blocked_ms_per_s"] = _blocked_ms_per_s(requests, t0, len(frame))
    end = float(frame["start_s"].iloc[-1] + 1.0) if len(frame) else warmup
    return Timeline(
        warmup_s=warmup,
        end_s=end,
        per_second=frame,
        pending=_pending(run.series, t0),
        instants=_instants(run.events, t0),
        faults=fault_spans(run),
    )
