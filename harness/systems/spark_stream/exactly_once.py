"""Exactly once on a Spark sink, from Spark's checkpoint rather than the system's word.

Which events had to be visible comes from Spark's checkpoint location (the batches it
committed and the landed files each one read); what is visible comes from the system's
own reader. A batch Spark planned but did not commit is uncertain: all of it or none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from harness.checks.exactly_once import exactly_once
from harness.checks.exactly_once_upserts import exactly_once_upserts
from harness.checks.result import CheckResult, capped
from harness.pipeline.events import EventSpec, upsert_keys
from harness.systems.spark_stream.checkpoint_truth import CheckpointTruth, local_path
from harness.systems.spark_stream.landing import parse_name

GROUND_TRUTH = "spark_checkpoint"


def _batch_range(batch: int, uris: Sequence[str]) -> tuple[int, int] | str:
    """The offsets [start, end) a batch read, or why they are not one range. The landing
    writes one file a tick holding every offset that fell due, so a batch that read
    consecutive files read one range."""
    parsed = [parse_name(local_path(u).name) for u in uris]
    files = sorted((f for f in parsed if f is not None), key=lambda f: f.start)
    if len(files) != len(parsed):
        return f"batch {batch} read a file that was not landed by the run: {capped(uris, 3)}"
    start, end = files[0].start, files[0].end
    for f in files[1:]:
        if f.start != end:
            return f"batch {batch} read offsets with a gap at {end}"
        end = f.end
    return start, end


def expected_batches(truth: CheckpointTruth) -> list[dict[str, Any]] | str:
    """The exactly-once check's batches, or why the checkpoint cannot give them."""
    if truth.problems:
        return "; ".join(truth.problems)
    out: list[dict[str, Any]] = []
    certain = {b: (files, True) for b, files in truth.batch_files.items()}
    pending = {b: (files, False) for b, files in truth.pending_batches.items()}
    for batch, (uris, is_certain) in sorted({**certain, **pending}.items()):
        if not uris:
            continue  # an empty batch: nothing to see
        bounds = _batch_range(batch, uris)
        if isinstance(bounds, str):
            return bounds
        out.append(
            {
                "batch_id": batch,
                "start_offset": bounds[0],
                "end_offset": bounds[1],
                "certain": is_certain,
            }
        )
    return out


def check_exactly_once(
    truth: CheckpointTruth, snapshot: pa.Table | None, spec: EventSpec, reader: str
) -> CheckResult:
    """Every event of a batch Spark committed visible once in `reader`'s snapshot, a batch
    it planned and did not commit all or nothing."""
    batches = expected_batches(truth)
    if isinstance(batches, str) or snapshot is None:
        reason = batches if isinstance(batches, str) else f"{reader} returned no snapshot"
        return CheckResult("exactly_once", "unknown", {"reason": reason})
    result = judge_rows(batches, snapshot, spec)
    committed = sum(1 for b in batches if b["certain"])
    evidence = {
        **result.evidence,
        "ground_truth": GROUND_TRUTH,
        "checkpoint": {
            "committed_batches": len(truth.committed_batches),
            "uncommitted_batches": len(truth.pending_batches),
            "batches_with_rows": committed,
        },
        "reader": f"{reader} (snapshot)",
    }
    return CheckResult(result.name, result.verdict, evidence)


def judge_rows(batches: list[dict[str, Any]], snapshot: pa.Table, spec: EventSpec) -> CheckResult:
    """The rows one read returned against the batches it must hold (and nothing else)."""
    if spec.mode == "upsert":
        result = exactly_once_upserts(
            batches,
            snapshot.column("id"),
            snapshot.column("event_id"),
            lambda offsets: upsert_keys(offsets, spec),
        )
    elif spec.mode == "bank":  # a transfer is two legs, ids 2 * event and 2 * event + 1
        legs = snapshot.filter(pc.greater_equal(snapshot.column("event_id"), 0))
        doubled = [
            {**b, "start_offset": 2 * b["start_offset"], "end_offset": 2 * b["end_offset"]}
            for b in batches
        ]
        result = exactly_once(doubled, legs.column("id"))
    else:
        result = exactly_once(batches, snapshot.column("event_id"))
    return result
