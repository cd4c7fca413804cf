"""hudi_java_reader: Apache Hudi's own Java reader (Spark's `hudi` datasource, in a JVM of
its own on the Hudi runtime) as a judge of an engine table.

The same comparison as hudi_reader (harness/checks/hudi_reader.py): the snapshot, the
time-travel points and the incremental pulls whose instants both readers select alike
(harness/checks/hudi_read_plan.py), row by row. Java Hudi 1.x's time travel
(`as.of.instant`) selects by requested time and its incremental query by completion time,
in (begin, end], as hudi-rs's do; it merges a slice's log files in the order of the
instant times in their names, as hudi-rs and the engine do. Nothing is left out for
archived log writes: hudi-rs's
reason (it reads the active timeline only) is not Java Hudi's, so any difference there is
a disagreement. The plan is made first and the JVM asked for exactly those reads, once.

A read Java Hudi fails on is a disagreement (`invalid`: the engine writes Hudi tables);
a JVM that never got to read (no runtime, no manifest) judges nothing: `unknown`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

from engine.table import Table
from harness.checks.hudi_read_plan import ReadPlan, plan_reads, read_limits
from harness.checks.hudi_reader import hudi_reader
from harness.checks.hudi_rs import (
    EngineReads,
    compared_columns,
    completed_instants,
    hudi_table_version,
)
from harness.checks.result import CheckResult
from harness.systems.hudi.read_table import TIMELINE_START, HudiReads, ReadRequest, read_table
from harness.systems.hudi.runtime import DEFAULT_VERSION, RuntimeUnavailable, ensure_runtime

NAME = "hudi_java_reader"
# Actions on Java Hudi's commits timeline (getCommitsTimeline), the engine's names.
COMMITS_TIMELINE = ("commit", "deltacommit", "compaction", "replacecommit")
READ_TIMEOUT_S = 600.0


class JavaReads:
    """The reads Java Hudi made, served to the comparison; a read it failed raises its error."""

    def __init__(self, reads: HudiReads, columns: list[str]) -> None:
        self.reads, self.columns = reads, columns

    def _served(self, label: str, table: pa.Table | None) -> pa.Table:
        if label in self.reads.errors:
            raise RuntimeError(f"Java Hudi failed {label}: {self.reads.errors[label]}")
        if table is None:
            raise RuntimeError(f"Java Hudi made no {label} read")
        return table.select(self.columns)

    def snapshot(self) -> pa.Table:
        return self._served("snapshot/latest", self.reads.snapshot)

    def as_of(self, time: str) -> pa.Table:
        return self._served(f"as_of/{time}", self.reads.as_of.get(time))

    def incremental(self, begin: str | None, end: str) -> pa.Table:
        begin = begin or TIMELINE_START
        return self._served(f"incremental/{begin}_{end}", self.reads.incremental.get((begin, end)))


def first_incomplete_commit(table: Table) -> str | None:
    """The requested time of the first pending write or compaction on the active timeline,
    as Java Hudi's commits timeline sees it (a rolled-back instant is gone for it)."""
    timeline = table.timeline.reload()
    gone = timeline.rolled_back()
    pending = [
        i.requested_time
        for i in timeline.pending()
        if i.action in COMMITS_TIMELINE and i.requested_time not in gone
    ]
    return min(pending, default=None)


def refused_by_java(first_incomplete: str | None) -> Callable[[str], str | None]:
    """Why Java Hudi refuses time travel to T by design (TimelineUtils.validateTimestampAsOf:
    a time at or after the first incomplete commit), or None."""

    def why(t: str) -> str | None:
        if first_incomplete is None or t < first_incomplete:
            return None
        return f"at or after the first incomplete commit {first_incomplete}"

    return why


def request_for(plan: ReadPlan, columns: list[str]) -> ReadRequest:
    """Java Hudi's reads for the plan: time travel to each point's T, each pull's range."""
    return ReadRequest(
        tuple(dict.fromkeys(t for _, t in plan.points)),
        tuple((p.begin or TIMELINE_START, p.end) for p in plan.pulls),
        tuple(columns),
    )


def check_table(
    table: Table,
    window_from: str | None,
    cleaned: frozenset[str],
    out_dir: Path,
    version: str = DEFAULT_VERSION,
) -> CheckResult:
    """hudi_java_reader on an engine table; the reads and the JVM's log go to `out_dir`.
    `window_from`, `cleaned`: the cleaner's window as the judge recomputed it."""
    reader = f"Apache Hudi {version} (Spark datasource)"
    if not isinstance(table.storage.filesystem, pafs.LocalFileSystem):
        reason = f"Java Hudi is run on local tables only ({table.storage.root})"
        return CheckResult(NAME, "unknown", {"reader": reader, "reason": reason})
    try:
        runtime = ensure_runtime(version)
    except RuntimeUnavailable as exc:
        return CheckResult(NAME, "unknown", {"reader": reader, "reason": str(exc)})
    key = table.config.key_field
    columns = compared_columns(table.schema, key)
    instants = completed_instants(table)
    limits = read_limits(table.stored_rows())
    refused = refused_by_java(first_incomplete_commit(table))
    plan = plan_reads(instants, limits, window_from, refused)
    reads = read_table(
        runtime, table.storage.root, out_dir, request_for(plan, columns), READ_TIMEOUT_S
    )
    if "reader" in reads.errors:
        why = {"reader": reader, "reason": reads.errors["reader"], "log": str(out_dir)}
        return CheckResult(NAME, "unknown", why)
    result = hudi_reader(
        instants,
        EngineReads(table, columns),
        JavaReads(reads, columns),
        key,
        reader,
        limits,
        window_from,
        refused=refused,
        name=NAME,
    )
    evidence: dict[str, Any] = {
        "table_version": hudi_table_version(table),
        **result.evidence,
        "java_read_seconds": round(sum(reads.seconds.values()), 3),
    }
    return CheckResult(NAME, result.verdict, evidence)
