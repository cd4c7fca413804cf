"""History input (docs/history.md): events and per-second series as frames, and the run window."""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

import numpy as np
import pandas as pd

from harness.history_events import Kind

Records: TypeAlias = pd.DataFrame | Iterable[Mapping[str, Any]]


def as_frame(records: Records) -> pd.DataFrame:
    """A frame from a list of dicts or a frame (copied, so callers' data is never changed)."""
    frame = records.copy() if isinstance(records, pd.DataFrame) else pd.DataFrame(list(records))
    if "t" in frame:
        frame["t"] = frame["t"].astype(float)
    return frame


@dataclass(frozen=True)
class RunWindow:
    """Times relative to run start: measured seconds are [warmup_s, end_s)."""

    t0: float  # epoch seconds of run_start
    warmup_s: float
    end_s: float  # warm-up + duration, or earlier if the run ended early

    def relative(self, t: pd.Series | np.ndarray) -> np.ndarray:
        return np.asarray(t, float) - self.t0

    def measured(self, frame: pd.DataFrame) -> pd.DataFrame:
        """Rows whose `t` falls in the measured part of the run (warm-up excluded)."""
        rel = self.relative(frame["t"]) if len(frame) else np.empty(0)
        return frame[(rel >= self.warmup_s) & (rel < self.end_s)]


def run_window(events: pd.DataFrame) -> RunWindow:
    starts = events[events["kind"] == Kind.RUN_START] if "kind" in events else events.iloc[:0]
    if starts.empty:
        raise ValueError("history has no run_start event: the run window is unknown")
    start = starts.iloc[0]
    t0, warmup = float(start["t"]), float(start["warmup_s"])
    end = warmup + float(start["duration_s"])
    ends = events[events["kind"] == Kind.RUN_END]
    if not ends.empty:
        end = min(end, float(ends["t"].iloc[0]) - t0)
    return RunWindow(t0=t0, warmup_s=warmup, end_s=max(end, warmup))


def of_kind(events: pd.DataFrame, kind: Kind) -> pd.DataFrame:
    return events[events["kind"] == kind] if "kind" in events else events.iloc[:0]
