"""Isolation on a format's Spark sink, read through the format's own time travel and
incremental reads.

Every commit of the stream that the runner saw appear is read back as of that commit
(`VERSION AS OF`: a Delta version, an Iceberg snapshot id), and each read must hold exactly
the batches the log had committed by then, each whole, and nothing of a later one; the
format's incremental read between two of the stream's commits (Delta's change data feed,
Iceberg's append scan) must hold exactly the later one's batch. What Spark's checkpoint
says those batches read decides which rows (exactly_once.py's judgement, per read). A
commit whose batch Spark's checkpoint does not know, or a read that failed, is `unknown`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from harness.checks.result import CheckResult, capped
from harness.pipeline.events import EventSpec
from harness.systems.spark_stream.checkpoint_truth import CheckpointTruth
from harness.systems.spark_stream.commit_watch import SeenCommit
from harness.systems.spark_stream.exactly_once import expected_batches, judge_rows
from harness.systems.spark_stream.read_back import Pull, SinkReads


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


def stream_pulls(entries: Sequence[SeenCommit], first: int) -> list[Pull]:
    """(after, upto) for each of the stream's commits: what the format's incremental read
    must return between the stream's commit before it (or, for its first, the commit
    before it: the table's creation or its opening balances) and it."""
    ordered = sorted(entries, key=lambda e: e.version)
    pulls: list[Pull] = []
    for commit in stream_commits(entries, first):
        before = [e for e in ordered if e.version < commit.version]
        after = pulls[-1][1] if pulls else (before[-1] if before else None)
        if after is not None:
            pulls.append((after, commit))
    return pulls


def _judge(
    commits: Sequence[SeenCommit],
    pulls: Sequence[Pull],
    reads: SinkReads,
    by_id: Mapping[int, dict[str, Any]],
    spec: EventSpec,
) -> list[dict[str, Any]]:
    failures = []
    for i, commit in enumerate(commits):
        want = [by_id[c.batch] for c in commits[: i + 1] if c.batch is not None]
        result = judge_rows(want, reads.as_of[commit.version], spec)
        if result.verdict != "valid":
            failures.append({"read": "as_of", **_failure(commit, result)})
    for after, upto in pulls:
        rows = reads.incremental[after.version, upto.version]
        want = [by_id[upto.batch]] if upto.batch is not None else []
        result = judge_rows(want, rows, spec)
        if result.verdict != "valid":
            failures.append(
                {"read": "incremental", "after": after.version, **_failure(upto, result)}
            )
    return failures


def check_isolation(
    truth: CheckpointTruth,
    commits: Sequence[SeenCommit],
    pulls: Sequence[Pull],
    reads: SinkReads,
    spec: EventSpec,
    reader: str,
) -> CheckResult:
    """`commits`: the stream's (stream_commits), each read as of itself; `pulls`: the
    incremental reads of what each added (stream_pulls, those the format can make)."""
    batches = expected_batches(truth)
    if isinstance(batches, str):
        return CheckResult("isolation", "unknown", {"reason": batches})
    by_id = {b["batch_id"]: {**b, "certain": True} for b in batches}
    evidence: dict[str, Any] = {
        "reader": f"{reader} (time travel, incremental)",
        "commits": len(commits),
        "pulls": len(pulls),
    }
    unknown = [c.batch for c in commits if c.batch not in by_id and c.batch is not None]
    missing = [f"as_of/{c.version}" for c in commits if c.version not in reads.as_of] + [
        f"incremental/{a.version}-{u.version}"
        for a, u in pulls
        if (a.version, u.version) not in reads.incremental
    ]
    if reads.errors or missing or unknown:
        reason = {"failed_reads": reads.errors, "not_read": missing, "unknown_batches": unknown}
        return CheckResult("isolation", "unknown", {**evidence, "reason": reason})
    failures = _judge(commits, pulls, reads, by_id, spec)
    evidence["violations"] = {"count": len(failures), "items": capped(failures)}
    return CheckResult("isolation", "invalid" if failures else "valid", evidence)
