"""`isolation` on Hudi: every read Hudi's reader made of the final table shows whole commits,
only committed ones, and the same history.

The incremental pull between two neighbouring completed commits holds what the later one
wrote; replaying the pulls in completion order (the last write of a key wins) gives what a
read as of each commit must show. So, for the reads Hudi's own reader made (read_table.py):
- no read holds a row written by an instant the runner never saw complete on the timeline
  (a dirty read: an inflight, failed or rolled-back write);
- each pull holds rows of its own commit only;
- each read as of a commit equals the replay of the pulls of the commits requested at or
  before it (Hudi's time travel selects by requested time): nothing of a later commit,
  nothing missing of an earlier one (a fractured or stale read);
- the replay of every pull equals the snapshot.
Rows are compared as (id, event_id, _hoodie_commit_time). Append and upsert alike: an
upsert's pull holds the new version of each key it wrote.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from harness.checks.result import CheckResult, capped
from harness.systems.hudi.read_table import TIMELINE_START, CompletedInstant, HudiReads

Row = tuple[int, int, str]  # id, event_id, _hoodie_commit_time


def _rows(table: pa.Table) -> list[Row]:
    columns = [table.column(c).to_pylist() for c in ("id", "event_id", "_hoodie_commit_time")]
    return [(int(i), int(e), str(c)) for i, e, c in zip(*columns, strict=True)]


def _replay(pulls: Sequence[list[Row]]) -> set[Row]:
    latest: dict[int, Row] = {}
    for rows in pulls:
        for row in rows:
            latest[row[0]] = row
    return set(latest.values())


def _difference(read: str, want: set[Row], got: list[Row]) -> dict[str, Any] | None:
    seen = set(got)
    missing, extra = want - seen, seen - want
    doubled = len(got) - len(seen)
    if not missing and not extra and not doubled:
        return None
    return {
        "read": read,
        "missing": {"count": len(missing), "rows": capped(sorted(missing), 5)},
        "extra": {"count": len(extra), "rows": capped(sorted(extra), 5)},
        "doubled": doubled,
    }


def _pulls(
    reads: HudiReads, commits: Sequence[CompletedInstant], problems: list[dict[str, Any]]
) -> list[list[Row]] | None:
    """Each commit's pull, in completion order; None if one is missing."""
    out: list[list[Row]] = []
    previous = TIMELINE_START
    for commit in commits:
        table = reads.incremental.get((previous, commit.completed))
        if table is None:
            return None
        rows = _rows(table)
        foreign = sorted({r for r in rows if r[2] != commit.requested})
        if foreign:
            problems.append(
                {
                    "read": f"incremental/{previous}_{commit.completed}",
                    "kind": "rows of another commit in a pull",
                    "rows": capped(foreign, 5),
                }
            )
        out.append(rows)
        previous = commit.completed
    return out


def _dirty(reads: HudiReads, committed: set[str]) -> list[dict[str, Any]]:
    named = [("snapshot", reads.snapshot)] if reads.snapshot is not None else []
    named += [(f"as_of/{t}", table) for t, table in reads.as_of.items()]
    out = []
    for name, table in named:
        dirty = sorted({r for r in _rows(table) if r[2] not in committed})
        if dirty:
            out.append({"read": name, "kind": "dirty read", "rows": capped(dirty, 5)})
    return out


def check_isolation(reads: HudiReads, commits: Sequence[CompletedInstant]) -> CheckResult:
    """`commits`: the completed data instants the runner saw, by completion time."""
    evidence: dict[str, Any] = {
        "reader": "Apache Hudi's Spark reader (snapshot, time travel, incremental)",
        "commits": len(commits),
        "reads": {"as_of": len(reads.as_of), "incremental": len(reads.incremental)},
    }
    if reads.snapshot is None or not commits:
        reason = "no snapshot was read" if reads.snapshot is None else "no completed commit"
        return CheckResult("isolation", "unknown", {**evidence, "reason": reason})
    problems = _dirty(reads, {c.requested for c in commits})
    pulls = _pulls(reads, commits, problems)
    if pulls is None:
        reason = "an incremental pull between two completed commits is missing"
        return CheckResult("isolation", "unknown", {**evidence, "reason": reason})
    for commit in commits:
        table = reads.as_of.get(commit.requested)
        if table is None:
            continue  # a read that failed is in reads.errors, which makes the check unknown
        before = [p for p, c in zip(pulls, commits, strict=True) if c.requested <= commit.requested]
        found = _difference(f"as_of/{commit.requested}", _replay(before), _rows(table))
        if found is not None:
            problems.append({**found, "kind": "time travel is not the replay of the pulls"})
    found = _difference("snapshot", _replay(pulls), _rows(reads.snapshot))
    if found is not None:
        problems.append({**found, "kind": "the snapshot is not the replay of the pulls"})
    evidence["violations"] = {"count": len(problems), "items": capped(problems)}
    return CheckResult("isolation", "invalid" if problems else "valid", evidence)
