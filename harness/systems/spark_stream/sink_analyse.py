"""After a run on a format's Spark sink: read the table back with the format's own reader,
judge it, build result.json.

- exactly_once (exactly_once.py): Spark's checkpoint says which events had to be visible,
  the format's own reader what is.
- unique_keys: that reader's snapshot.
- timeline: the format's commit log as the runner saw it appear (commit_rules.py).
- isolation (isolation.py): the table as of each of the stream's commits, through the
  format's own time travel, holds exactly the batches committed by then.
Partial or contradictory evidence makes a check `unknown`, never `valid`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.checks import CheckResult
from harness.checks.bank_reads import bank_of_reads
from harness.checks.result import capped
from harness.checks.unique_keys import unique_keys
from harness.history import HistoryWriter, load_events, read_series
from harness.history_events import Kind
from harness.runner.analysis import assemble_result
from harness.systems.spark_stream.anchor import Anchor
from harness.systems.spark_stream.checkpoint_truth import CheckpointTruth, batch_rows, read_truth
from harness.systems.spark_stream.commit_rules import judge
from harness.systems.spark_stream.commit_watch import CommitWatch, SeenCommit
from harness.systems.spark_stream.exactly_once import check_exactly_once
from harness.systems.spark_stream.isolation import (
    check_isolation,
    snapshot_commits,
    stream_commits,
    stream_pulls,
)
from harness.systems.spark_stream.landing import event_spec
from harness.systems.spark_stream.read_back import SinkReads, read_back, reader_name
from harness.systems.spark_stream.run_environment import system_environment, unmeasured

if TYPE_CHECKING:
    from harness.systems.spark_stream.sink_run import SinkRun

# The engine's own parts that a format's Spark sink does not have (a comparison shows "-").
NOT_MEASURED = ("ingest_rows_per_s", "writer_blocked_ms_per_s", "instant_request_ms")


def commit_events(
    entries: Sequence[SeenCommit],
    planned: dict[int, float],
    truth: CheckpointTruth,
    anchor: Anchor,
) -> list[dict[str, Any]]:
    """One `commit` event per version that committed a batch of the stream: its rows and
    newest event time from the landed files Spark's checkpoint names, its latency from
    Spark planning the batch to the version appearing (both on the runner's clock)."""
    out = []
    for e in entries:
        batch = e.batch
        if batch is None:
            continue
        rows, newest = batch_rows(truth, batch)
        start = planned.get(batch)
        out.append(
            {
                "kind": "commit",
                "t": anchor.wall_of(e.seen_s),
                "instant": str(e.version),
                "checkpoint_id": batch,
                "rows": rows,
                "latency_ms": None if start is None else round((e.seen_s - start) * 1000, 1),
                "max_event_time": newest,
            }
        )
    return out


def check_timeline(entries: Sequence[SeenCommit], watch: CommitWatch, table: Path) -> CheckResult:
    evidence: dict[str, Any] = {
        "order": f"{watch.log.folder} versions in the order the runner saw them appear",
        "versions_seen": len(entries),
    }
    if watch.error is not None:
        return CheckResult("timeline", "unknown", {**evidence, "reason": str(watch.error)})
    if not entries:
        reason = "no version was seen: nothing to judge"
        return CheckResult("timeline", "unknown", {**evidence, "reason": reason})
    violations = judge(entries, table, watch.log.first)
    evidence["violations"] = {
        "count": len(violations),
        "items": capped(asdict(v) for v in violations),
    }
    return CheckResult("timeline", "invalid" if violations else "valid", evidence)


def _bank(run: SinkRun, reads: SinkReads) -> CheckResult:
    txns = [e for e in load_events(run.paths.history)[0] if e["kind"] == Kind.TXN]
    errors = {**reads.errors, **({"snapshot": reads.failure} if reads.failure else {})}
    return bank_of_reads(
        f"{reader_name(run)} (time travel, incremental)",
        reads.snapshot,
        reads.as_of,
        errors,
        run.scenario.source.accounts,
        txns,
        reads.incremental,
    )


def _checks(run: SinkRun, truth: CheckpointTruth, watch: CommitWatch) -> list[CheckResult]:
    entries = watch.entries()
    # bank: the table as of every commit after its creation (the opening balances', each
    # transfer's); the other checks need only the stream's.
    first, bank = watch.log.first, "bank" in run.scenario.checks
    root, commits = run.paths.root, stream_commits(entries, first)
    # Each pull's read, where the format can pull it (Iceberg: none from the creation).
    pulls = {
        pull: pull_read
        for pull in stream_pulls(entries, first)
        if (pull_read := run.system.incremental(root, *pull)) is not None
    }
    reads = read_back(run, snapshot_commits(entries, first) if bank else commits, pulls)
    snapshot, spec, reader = reads.snapshot, event_spec(run.scenario), reader_name(run)
    judges: dict[str, Callable[[], CheckResult]] = {
        "exactly_once": lambda: check_exactly_once(truth, snapshot, spec, reader),
        "unique_keys": lambda: (
            CheckResult("unique_keys", "unknown", {"reason": reads.failure})
            if snapshot is None
            else unique_keys(snapshot.column("id"))
        ),
        "timeline": lambda: check_timeline(entries, watch, run.paths.table),
        "isolation": lambda: check_isolation(truth, commits, list(pulls), reads, spec, reader),
        "bank": lambda: _bank(run, reads),
    }
    return [judges[name]() for name in run.scenario.checks]  # validate admits only these


def analyse_sink_run(run: SinkRun, error: str | None, watch: CommitWatch) -> dict[str, Any]:
    paths = run.paths
    history = HistoryWriter(paths.history, "analysis")
    truth = read_truth(paths.root / "checkpoint")
    for event in commit_events(watch.entries(), watch.planned_seen, truth, run.anchor):
        history.record(event.pop("kind"), **event)
    checks: dict[str, Any] = {}
    judged_anyway = error is not None and error == run.system_failure
    if error is None or judged_anyway:
        if run.progress is not None:
            run.progress.phase(f"reading the table back through {reader_name(run)}")
        try:
            checks = {r.name: r.to_dict() for r in _checks(run, truth, watch)}
        except Exception as exc:  # an unreadable table: the verdict is unknown, not valid
            error = f"checking failed: {type(exc).__name__}: {exc}"
    events, _ = load_events(paths.history)
    result = assemble_result(
        run.scenario,
        paths,
        paths.root.name,
        run.variant,
        error,
        checks,
        events,
        read_series(paths.history),
        system_environment(
            run.scenario, run.runtime, run.scenario.system.version or run.system.default_version
        ),
        violation_stands=judged_anyway,
    )
    return unmeasured(result, NOT_MEASURED)
