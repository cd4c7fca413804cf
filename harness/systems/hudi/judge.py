"""The checks on a Hudi run, from evidence Hudi does not write about itself.

- exactly_once (harness/systems/spark_stream/exactly_once.py): Spark's checkpoint says
  which events had to be visible, Hudi's own Spark reader what is.
- unique_keys: the snapshot that reader returned.
- bank: the total and the accounts in every read Hudi's reader made of the final table
  (snapshot, time travel to each completed commit, incremental pulls).
- isolation (isolation.py): every read shows whole, committed commits, the replay of the
  incremental pulls in completion order.
- timeline: the times of Hudi's instant files in the order the runner saw them appear,
  on its monotonic clock (Hudi's instant times are clock readings).
Partial or contradictory evidence makes a check `unknown`, never `valid`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

import pyarrow as pa

from harness.checks.bank_reads import bank_of_reads
from harness.checks.result import CheckResult, capped
from harness.checks.unique_keys import unique_keys
from harness.systems.hudi.read_table import HudiReads
from harness.systems.hudi.timeline_watch import SeenInstant, judge


def check_bank(reads: HudiReads, accounts: int, txns: Sequence[dict[str, Any]] = ()) -> CheckResult:
    """The bank check (harness/checks/bank_reads.py) over every read Hudi's reader made of
    the final table: the snapshot, as of each completed commit, each incremental pull
    between two neighbours."""
    return bank_of_reads(
        "Apache Hudi's Spark reader (time travel, incremental)",
        reads.snapshot,
        reads.as_of,
        reads.errors,
        accounts,
        txns,
        reads.incremental,
    )


def check_unique_keys(snapshot: pa.Table | None) -> CheckResult:
    if snapshot is None:
        return CheckResult("unique_keys", "unknown", {"reason": "no snapshot was read"})
    result = unique_keys(snapshot.column("id"))
    return CheckResult(result.name, result.verdict, {**result.evidence, "engine": "pyarrow"})


def check_timeline(entries: Sequence[SeenInstant], watch_error: str | None) -> CheckResult:
    """Times strictly increasing in the order the instants appeared (ties within one poll
    are not ordered, so not judged)."""
    evidence: dict[str, Any] = {
        "order": "timeline files in the order the runner saw them appear (monotonic clock)",
        "files_seen": len(entries),
        "completed": sum(1 for e in entries if e.state == "completed"),
    }
    if watch_error is not None:
        return CheckResult("timeline", "unknown", {**evidence, "reason": watch_error})
    if not any(e.state == "completed" for e in entries):
        reason = "no completed instant was seen: nothing to judge"
        return CheckResult("timeline", "unknown", {**evidence, "reason": reason})
    violations = judge(entries)
    evidence["violations"] = {
        "count": len(violations),
        "items": capped(asdict(v) for v in violations),
    }
    return CheckResult("timeline", "invalid" if violations else "valid", evidence)
