"""A run's history as chartable time series, in seconds since run start (run_start `t`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

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
    # start_s, rows_per_s, ingest_rows_per_s, freshness_s, blocked_ms_per_s (and more)
    per_second: pd.DataFrame
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


def _per_second(run: RunData) -> pd.DataFrame:
    """history/per_second.jsonl, written by the analysis: the very series the metrics use."""
    if not run.per_second:
        raise ValueError(
            "history/per_second.jsonl is missing or empty (the run's analysis did not finish, "
            "or the run predates the file)"
        )
    frame = pd.DataFrame(run.per_second)
    if "start_s" not in frame or "rows_per_s" not in frame:
        raise ValueError("history/per_second.jsonl has no start_s or rows_per_s")
    frame = frame.rename(columns={"writer_blocked_ms_per_s": "blocked_ms_per_s"})
    for column in ("rows_per_s", "freshness_s", "blocked_ms_per_s"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce") if column in frame else np.nan
    return frame.drop(columns=["faults", "measured"], errors="ignore").sort_values("start_s")


def build_timeline(run: RunData) -> Timeline:
    """Raises ValueError when the history has no run_start (there is no time zero) or no
    per-second series."""
    start = run.run_start
    if start is None:
        raise ValueError("the history has no run_start event")
    t0, warmup = float(start["t"]), float(start.get("warmup_s") or 0.0)
    frame = _per_second(run).reset_index(drop=True)
    end = float(frame["start_s"].iloc[-1] + 1.0) if len(frame) else warmup
    return Timeline(
        warmup_s=warmup,
        end_s=end,
        per_second=frame,
        pending=_pending(run.series, t0),
        instants=_instants(run.events, t0),
        faults=fault_spans(run),
    )
