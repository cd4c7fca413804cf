"""history/per_second.jsonl: the metrics' per-second series over the whole run, for reports.

Reports read files only (DESIGN.md), so the analysis writes the series the metrics come
from: one JSON object per second since run start, the warm-up included (reports shade it)
and flagged with `measured: false`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from harness.history_events import Kind
from harness.metrics import MetricParams, timeseries

PER_SECOND_FILE = "per_second.jsonl"


def _plain(value: Any) -> Any:
    """JSON for a frame cell: NaN (a bucket not judged yet) as null, numpy scalars as Python."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_per_second(
    history_dir: Path, events: list[dict[str, Any]], params: MetricParams | None = None
) -> Path | None:
    """Write the series; None (and no file) when the history has no run_start (no time zero)."""
    start = next((e for e in events if e.get("kind") == Kind.RUN_START), None)
    if start is None:
        return None
    warmup = float(start.get("warmup_s") or 0.0)
    # timeseries() covers the measured window only: give it a copy of the history whose
    # warm-up is folded into the measured duration.
    whole = dict(start, warmup_s=0.0, duration_s=warmup + float(start.get("duration_s") or 0.0))
    frame = timeseries([whole if e is start else e for e in events], params)
    frame["measured"] = frame["start_s"] >= warmup
    path = Path(history_dir) / PER_SECOND_FILE
    with open(path, "w", encoding="utf-8") as f:
        for row in frame.to_dict(orient="records"):
            f.write(json.dumps({k: _plain(v) for k, v in row.items()}) + "\n")
    return path
