"""Evidence that a worker's process-level clock skew (libfaketime) reached its tasks.

Every writer task records its wall clock minus the monotonic clock (`task_clock`), and the
runner records its own when it sets the skew. libfaketime leaves the monotonic clock alone
and all processes of a machine share it, so the difference between the two is the skew
the task saw, and `t - wall_minus_mono_s` places a task on the runner's time line even
when its wall clock is skewed.
"""

from __future__ import annotations

import statistics
from typing import Any

from harness.history_events import Kind

SETTLE_S = 1.5  # libfaketime re-reads the offset file about once a second


def observed_worker_skew(fault: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, Any]:
    """{tasks, skew_ms (median over the worker's tasks inside the window), skew_ms_before}."""
    evidence = fault.get("evidence", {})
    base = evidence.get("runner_wall_minus_mono_s")
    host = evidence.get("host")
    if base is None or host is None:
        return {"tasks": 0, "skew_ms": None, "skew_ms_before": None}
    start = fault["t"] - base  # monotonic seconds
    end = start + max(fault.get("end_s", 0) - fault.get("start_s", 0), 0)
    inside, before = [], []
    for e in events:
        if e["kind"] != Kind.TASK_CLOCK or e.get("host") != host:
            continue
        mono = e["t"] - e["wall_minus_mono_s"]
        skew_ms = (e["wall_minus_mono_s"] - base) * 1000
        if start + SETTLE_S <= mono < end:
            inside.append(skew_ms)
        elif mono < start:
            before.append(skew_ms)
    return {
        "tasks": len(inside),
        "skew_ms": round(statistics.median(inside), 1) if inside else None,
        "skew_ms_before": round(statistics.median(before), 1) if before else None,
    }
