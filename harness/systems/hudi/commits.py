"""Hudi's commits as history events, from what the runner saw and Spark recorded.

The metrics read `commit` events (docs/history.md): when rows became visible, how many,
and the newest event time among them. For Hudi they come from outside its JVM: the time
the runner saw each completed data instant appear (its monotonic clock, anchored to the
wall clock at the run's start), the sink batch its commit metadata records, and that
batch's rows and event times read from the landed files Spark's checkpoint names.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.systems.hudi.timeline_watch import SeenInstant, instant_path, sink_batch
from harness.systems.spark_stream.anchor import Anchor
from harness.systems.spark_stream.checkpoint_truth import CheckpointTruth, batch_rows


def _first_seen(entries: Sequence[SeenInstant]) -> dict[str, float]:
    """Requested time -> when the instant's first file (requested or inflight) appeared."""
    first: dict[str, float] = {}
    for e in entries:
        first.setdefault(e.requested, e.seen_s)
    return first


def commit_events(
    entries: Sequence[SeenInstant],
    table: Path,
    truth: CheckpointTruth,
    identifier: str,
    anchor: Anchor,
) -> list[dict[str, Any]]:
    """One `commit` event per completed instant of this sink (compactions and other
    writers' instants carry no batch of it and are left out)."""
    first = _first_seen(entries)
    out = []
    for e in entries:
        path = instant_path(table, e.name) if e.state == "completed" else None
        batch = sink_batch(path, identifier) if path is not None else None
        if batch is None:
            continue
        rows, newest = batch_rows(truth, batch)
        out.append(
            {
                "kind": "commit",
                "t": anchor.wall_of(e.seen_s),
                "instant": e.requested,
                "checkpoint_id": batch,
                "requested": e.requested,
                "completed": e.completed,
                "rows": rows,
                "latency_ms": round((e.seen_s - first[e.requested]) * 1000, 1),
                "max_event_time": newest,
            }
        )
    return out
