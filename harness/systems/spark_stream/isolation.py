"""Isolation on a format's Spark sink, read through the format's own time travel.

Every commit of the stream that the runner saw appear is read back as of that commit
(`versionAsOf`: a Delta version, an Iceberg snapshot id), and each read must hold exactly the
batches the log had committed by then, each whole, and nothing of a later one: what
Spark's checkpoint says those batches read decides which rows (exactly_once.py's
judgement, per read). A commit whose batch Spark's checkpoint does not know is `unknown`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from harness.checks.result import CheckResult, capped
from harness.pipeline.events import EventSpec
from harness.systems.spark_stream.checkpoint_truth import CheckpointTruth
from harness.systems.spark_stream.commit_watch import SeenCommit
from harness.systems.spark_stream.exactly_once import expected_batches, judge_rows


def snapshot_commits(entries: Sequence[SeenCommit], first: int) -> list[SeenCommit]:
    """The commits after the table's creation (version `first`, holding no rows) that
    made a new table state visible, in version order: Iceberg's later metadata versions
    may keep a snapshot current, and only its first version counts."""
    out: list[SeenCommit] = []
    for e in sorted(entries, key=lambda e: e.version):
        kept = out and e.snapshot is not None and e.snapshot == out[-1].snapshot
        if e.version != first and not kept:
            out.append(e)
    return out


def stream_commits(entries: Sequence[SeenCommit], first: int) -> list[SeenCommit]:
    """The commits that made a batch of the stream visible, in version order."""
    return [e for e in snapshot_commits(entries, first) if e.batch is not None]


def _failure(commit: SeenCommit, result: CheckResult) -> dict[str, Any]:
    kinds = ("lost", "duplicated", "phantom", "stale", "partial_batches")
    found = {
        k: result.evidence[k]["count"] for k in kinds if result.evidence.get(k, {}).get("count")
    }
    return {"version": commit.version, "batch": commit.batch, **found}


def check_isolation(
    truth: CheckpointTruth,
    commits: Sequence[SeenCommit],
    reads: Mapping[int, pa.Table],
    errors: Mapping[int, str],
    spec: EventSpec,
    reader: str,
) -> CheckResult:
    """`commits`: the stream's (stream_commits); `reads`: version -> the rows read as of
    that commit; `errors`: reads that failed."""
    batches = expected_batches(truth)
    if isinstance(batches, str):
        return CheckResult("isolation", "unknown", {"reason": batches})
    by_id = {b["batch_id"]: {**b, "certain": True} for b in batches}
    evidence: dict[str, Any] = {"reader": f"{reader} (time travel)", "commits": len(commits)}
    unknown = [c.batch for c in commits if c.batch not in by_id and c.batch is not None]
    missing = [c.version for c in commits if c.version not in reads]
    if errors or missing or unknown:
        reason = {"failed_reads": dict(errors), "not_read": missing, "unknown_batches": unknown}
        return CheckResult("isolation", "unknown", {**evidence, "reason": reason})
    failures = []
    for i, commit in enumerate(commits):
        want = [by_id[c.batch] for c in commits[: i + 1] if c.batch in by_id]
        result = judge_rows(want, reads[commit.version], spec)
        if result.verdict != "valid":
            failures.append(_failure(commit, result))
    evidence["violations"] = {"count": len(failures), "items": capped(failures)}
    return CheckResult("isolation", "invalid" if failures else "valid", evidence)
