"""After a Hudi run: read the table back with Hudi's reader, judge it, build result.json."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from harness.checks import CheckResult
from harness.history import HistoryWriter, load_events, read_series
from harness.history_events import Kind
from harness.runner.analysis import assemble_result
from harness.scenario import Scenario
from harness.systems.hudi.commits import commit_events
from harness.systems.hudi.isolation import check_isolation
from harness.systems.hudi.judge import (
    check_bank,
    check_timeline,
    check_unique_keys,
)
from harness.systems.hudi.read_table import (
    CompletedInstant,
    HudiReads,
    ReadRequest,
    completed_instants,
    read_table,
)
from harness.systems.hudi.run_state import HudiRun
from harness.systems.hudi.timeline_watch import SeenInstant
from harness.systems.spark_stream.checkpoint_truth import CheckpointTruth, read_truth
from harness.systems.spark_stream.exactly_once import check_exactly_once
from harness.systems.spark_stream.landing import event_spec
from harness.systems.spark_stream.run_environment import system_environment, unmeasured

# Metrics of the engine's own parts that Hudi's pipeline does not have: the engine source's
# ingest rate, and writer tasks that wait for an instant (Hudi's sink makes its own inline).
NOT_MEASURED = ("ingest_rows_per_s", "writer_blocked_ms_per_s")


def _checks(
    scenario: Scenario,
    truth: CheckpointTruth,
    reads: HudiReads,
    entries: Sequence[SeenInstant],
    watch_error: str | None,
    txns: Sequence[dict[str, Any]],
    commits: Sequence[CompletedInstant],
) -> list[CheckResult]:
    snapshot = reads.snapshot
    judges: dict[str, Callable[[], CheckResult]] = {
        "exactly_once": lambda: check_exactly_once(
            truth, snapshot, event_spec(scenario), "Apache Hudi's Spark reader"
        ),
        "unique_keys": lambda: check_unique_keys(snapshot),
        "timeline": lambda: check_timeline(entries, watch_error),
        "bank": lambda: check_bank(reads, scenario.source.accounts, txns),
        "isolation": lambda: check_isolation(reads, commits),
    }
    out = []
    for name in scenario.checks:
        result = judges[name]()  # validate admits only these for hudi
        if reads.errors and result.verdict == "valid" and name != "timeline":
            evidence = {**result.evidence, "reason": f"Hudi's reader failed: {reads.errors}"}
            result = CheckResult(name, "unknown", evidence)
        out.append(result)
    return out


def analyse_hudi_run(
    run: HudiRun,
    error: str | None,
    entries: Sequence[SeenInstant],
    watch_error: str | None,
    lock: dict[str, Any] | None,
) -> dict[str, Any]:
    scenario, paths = run.scenario, run.paths
    history = HistoryWriter(paths.history, "analysis")
    truth = read_truth(paths.root / "checkpoint")
    for event in commit_events(entries, paths.table, truth, run.identifier, run.anchor):
        history.record(event.pop("kind"), **event)
    checks: dict[str, Any] = {}
    # A system that failed by itself left a table whose committed state is still durable.
    judged_anyway = error is not None and error == run.system_failure
    if error is None or judged_anyway:
        if run.progress is not None:
            run.progress.phase("reading the table back through Hudi's reader")
        try:
            instants = completed_instants(entries, actions=("deltacommit", "commit"))
            reads = read_table(
                run.runtime, paths.table, paths.root / "reads", ReadRequest.of_instants(instants)
            )
            txns = [e for e in load_events(paths.history)[0] if e["kind"] == Kind.TXN]
            results = _checks(scenario, truth, reads, entries, watch_error, txns, instants)
            checks = {r.name: r.to_dict() for r in results}
        except Exception as exc:  # an unreadable table: the verdict is unknown, not valid
            error = f"checking failed: {type(exc).__name__}: {exc}"
    events, _ = load_events(paths.history)
    series = read_series(paths.history)
    env = system_environment(scenario, run.runtime, scenario.system.version or "1.2.0", lock)
    result = assemble_result(
        scenario,
        paths,
        paths.root.name,
        run.variant,
        error,
        checks,
        events,
        series,
        env,
        violation_stands=judged_anyway,
    )
    return unmeasured(result, NOT_MEASURED)
