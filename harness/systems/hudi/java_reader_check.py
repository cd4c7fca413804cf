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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
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
from harness.systems.hudi.read_table import (
    TIMELINE_START,
    HudiReads,
    ReadRequest,
    TableRead,
    read_tables,
)
from harness.systems.hudi.runtime import DEFAULT_VERSION, ensure_runtime
from harness.systems.spark_stream.runtime_cache import RuntimeUnavailable

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


@dataclass(frozen=True)
class TableJob:
    """One engine table to judge, the cleaner's retention boundary the judge recomputed
    (None: nothing cleaned) and where its reads go."""

    table: Table
    window_from: str | None
    out_dir: Path


@dataclass(frozen=True)
class _Planned:
    job: TableJob
    columns: list[str]
    instants: list[Any]
    limits: tuple[int, int]
    refused: Callable[[str], str | None]
    plan: ReadPlan

    @classmethod
    def of(cls, job: TableJob) -> _Planned:
        table = job.table
        columns = compared_columns(table.schema, table.config.key_field)
        instants = completed_instants(table)
        limits = read_limits(table.stored_rows())
        refused = refused_by_java(first_incomplete_commit(table))
        plan = plan_reads(instants, limits, job.window_from, refused)
        return cls(job, columns, instants, limits, refused, plan)

    def read(self) -> TableRead:
        root = Path(self.job.table.storage.root)
        return TableRead(root, self.job.out_dir, request_for(self.plan, self.columns))

    def judge(self, reads: HudiReads, reader: str, log: Path) -> CheckResult:
        if "reader" in reads.errors:
            why = {"reader": reader, "reason": reads.errors["reader"], "log": str(log)}
            return CheckResult(NAME, "unknown", why)
        table = self.job.table
        result = hudi_reader(
            self.instants,
            EngineReads(table, self.columns),
            JavaReads(reads, self.columns),
            table.config.key_field,
            reader,
            self.limits,
            self.job.window_from,
            refused=self.refused,
            name=NAME,
        )
        evidence: dict[str, Any] = {
            "table_version": hudi_table_version(table),
            **result.evidence,
            "java_read_seconds": round(sum(reads.seconds.values()), 3),
        }
        return CheckResult(NAME, result.verdict, evidence)


def check_tables(
    jobs: Sequence[TableJob], work_dir: Path, version: str = DEFAULT_VERSION
) -> list[CheckResult]:
    """hudi_java_reader on engine tables, one result per job, every table read in one JVM
    (its config and log in `work_dir`)."""
    reader = f"Apache Hudi {version} (Spark datasource)"
    try:
        runtime = ensure_runtime(version)
    except RuntimeUnavailable as exc:
        return [CheckResult(NAME, "unknown", {"reader": reader, "reason": str(exc)})] * len(jobs)
    results: dict[int, CheckResult] = {}
    planned: dict[int, _Planned] = {}
    for n, job in enumerate(jobs):
        if isinstance(job.table.storage.filesystem, pafs.LocalFileSystem):
            planned[n] = _Planned.of(job)
        else:
            reason = f"Java Hudi is run on local tables only ({job.table.storage.root})"
            results[n] = CheckResult(NAME, "unknown", {"reader": reader, "reason": reason})
    if planned:
        asked = [p.read() for p in planned.values()]
        reads = read_tables(runtime, asked, work_dir, READ_TIMEOUT_S)
        for (n, p), got in zip(planned.items(), reads, strict=True):
            results[n] = p.judge(got, reader, work_dir)
    return [results[n] for n in range(len(jobs))]


def check_table(
    table: Table, window_from: str | None, out_dir: Path, version: str = DEFAULT_VERSION
) -> CheckResult:
    """hudi_java_reader on one engine table; its reads and the JVM's log go to `out_dir`."""
    return check_tables([TableJob(table, window_from, out_dir)], out_dir, version)[0]
