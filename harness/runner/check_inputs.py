"""Turn a run's history and final table into the checkers' inputs, and run the checks."""

from __future__ import annotations

import functools
import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import pyarrow.compute as pc

from engine.table import cleaning
from harness.checks import (
    CheckResult,
    bank,
    exactly_once,
    exactly_once_upserts,
    isolation,
    timeline,
    unique_keys,
)
from harness.checks.hudi_rs import check_table as hudi_reader
from harness.pipeline.events import OPENING_BALANCE, upsert_keys
from harness.pipeline.session import local_master
from harness.runner.driver_config import event_spec
from harness.runner.final_state import FinalState
from harness.runner.ground_truth import GroundTruth, expected_batches
from harness.runner.rundir import RunPaths
from harness.runner.spark_checks import SPARK_ABOVE_ROWS, SparkCheckJob, run_spark_checks
from harness.scenario import Scenario
from harness.workload.reads import perform_read, sweep_reads

# Checks that need the engine's timeline and reads (not the raw_parquet ceiling).
ENGINE_ONLY = {"timeline", "isolation", "bank", "hudi_reader"}
# Checks that read the whole final table: on Spark when it is large (check_engine).
WHOLE_TABLE = ("exactly_once", "unique_keys")


def _of_kind(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["kind"] == kind]


def _stream_rows(final: FinalState):
    """Rows the stream wrote (batch writers' and the bank's opening rows have no event)."""
    return final.rows.filter(pc.greater_equal(final.rows.column("event_id"), 0))


def _stream_ids(scenario: Scenario, final: FinalState):
    rows = _stream_rows(final)
    # Bank legs have their own ids (2 * event, 2 * event + 1); appends use the event id.
    return rows.column("id" if scenario.source.mode == "bank" else "event_id")


def _exactly_once(scenario: Scenario, batches: list[dict[str, Any]], final: FinalState):
    if scenario.source.mode != "upsert":
        return exactly_once(batches, _stream_ids(scenario, final))
    spec = event_spec(scenario)
    rows = _stream_rows(final)
    return exactly_once_upserts(
        batches,
        rows.column("id"),
        rows.column("event_id"),
        lambda offsets: upsert_keys(offsets, spec),
    )


def _whole_table_check(
    name: str, scenario: Scenario, truth: GroundTruth, final: FinalState
) -> CheckResult:
    if name == "unique_keys":
        return unique_keys(final.rows.column("id"))
    return truth.judge(_exactly_once(scenario, truth.batches, final))


def _timeline_input(events: list[dict[str, Any]], final: FinalState) -> list[dict[str, Any]]:
    # The order of generation is not taken from events (their wall-clock `t` is what a clock
    # fault moves, and a killed process loses them): the table's instant files carry each
    # time's generation sequence number (final.instants[...]["generated"]).
    commits = _of_kind(events, "commit") + _of_kind(events, "txn_commit")
    committed = Counter(e["instant"] for e in commits)
    return [
        {
            **instant,
            # The history's commit events, or the table's completed files if more.
            "committed_count": max(
                committed.get(instant["requested"], 0), instant.get("completions", 0)
            ),
        }
        for instant in final.instants
    ]


def _isolation_inputs(events, final: FinalState, is_bank: bool):
    """The run's reads, each as-of read and pull made again on the final table, the
    completion time of every instant that completed and was not rolled back, and the
    reads a clean moved out of the retention window (not repeatable, not compared)."""
    completed = {
        i["requested"]: i["completed"]
        for i in final.instants
        if i["state"] == "completed" and not i["rolled_back"]
    }
    reads = _of_kind(events, "read")
    repeated, out_of_window = [], []
    seen = set()
    for r in reads:
        key = (r["read_kind"], r.get("as_of"), r.get("begin"), r.get("end"))
        if r["read_kind"] == "snapshot" or key in seen:
            continue
        seen.add(key)
        point = r.get("as_of") if r["read_kind"] == "as_of" else r.get("begin")
        if not cleaning.in_window(final.table, point):
            out_of_window.append(r)  # a clean since deleted what it read: not repeatable
            continue
        repeated.append(
            perform_read(
                final.table,
                r["read_kind"],
                as_of=r.get("as_of"),
                begin=r.get("begin"),
                end=r.get("end"),
                bank=is_bank,
            )
        )
    return reads, repeated, completed, out_of_window


def check_engine(scenario: Scenario, final: FinalState) -> str:
    """pyarrow or spark for the whole-table checks (scenario key `check_engine`)."""
    if final.table is None:  # the raw_parquet ceiling has no engine table to scan
        return "pyarrow"
    if scenario.check_engine != "auto":
        return scenario.check_engine
    return "spark" if final.table.stored_rows() > SPARK_ABOVE_ROWS else "pyarrow"


def _on_spark(
    scenario: Scenario,
    truth: GroundTruth,
    final: FinalState,
    paths: RunPaths,
    on_phase: Callable[[str], None],
) -> dict[str, CheckResult]:
    names = [c for c in scenario.checks if c in WHOLE_TABLE]
    if not names or check_engine(scenario, final) != "spark":
        return {}
    on_phase(f"checks: {', '.join(names)} on spark (a Spark job: tens of seconds)")
    job = SparkCheckJob(
        table_path=str(paths.table),
        as_of=final.table.timeline.reload().last_completion_time(),
        checks=names,
        mode=scenario.source.mode,
        batches=truth.batches,
        event_spec=event_spec(scenario).to_dict(),
        master=local_master(scenario.engine.writers, 1),
    )
    results = run_spark_checks(job, paths.control, paths.logs / "checks-spark.log")
    return {r.name: truth.judge(r) if r.name == "exactly_once" else r for r in results}


def run_checks(
    scenario: Scenario,
    events: list[dict[str, Any]],
    final: FinalState,
    paths: RunPaths,
    on_phase: Callable[[str], None] = lambda _: None,
) -> list[CheckResult]:
    """on_phase: told which check runs (the terminal's status line)."""
    is_bank = scenario.source.mode == "bank"
    wanted = [c for c in scenario.checks if final.table is not None or c not in ENGINE_ONLY]
    failed_reads = _of_kind(events, "read_error")

    @functools.cache  # shared by the whole-table checks; computed inside their guard
    def truth_and_spark() -> tuple[GroundTruth, dict[str, CheckResult]]:
        # Which batches must be visible: Spark's checkpoint location (see ground_truth).
        truth = expected_batches(scenario, events, paths.checkpoint)
        return truth, _on_spark(scenario, truth, final, paths, on_phase)

    def check(name: str) -> CheckResult:
        on_phase(f"checks: {name}")
        if name in WHOLE_TABLE:
            truth, on_spark = truth_and_spark()
            result = on_spark.get(name) or _whole_table_check(name, scenario, truth, final)
            engine = "spark" if name in on_spark else "pyarrow"
            return CheckResult(name, result.verdict, {**result.evidence, "engine": engine})
        if name == "timeline":
            orphans = {"files": final.orphan_files, "read": []}
            return timeline(_timeline_input(events, final), orphans, final.last_generated)
        if name == "isolation":
            reads, repeated, completed, out_of_window = _isolation_inputs(events, final, is_bank)
            return isolation(reads, repeated, completed, failed_reads, out_of_window)
        if name == "bank":
            sweep = sweep_reads(final.table, random.Random(scenario.seed))
            accounts = scenario.source.accounts
            reads = [*_of_kind(events, "read"), *sweep]
            return bank(reads, accounts * OPENING_BALANCE, accounts, failed_reads)
        if name == "hudi_reader":  # Apache Hudi's reader re-reads the table: a second judge
            return hudi_reader(final.table)
        raise ValueError(f"no checker named {name!r}")

    return [guarded(name, check) for name in wanted]


def guarded(name: str, check: Callable[[str], CheckResult]) -> CheckResult:
    """check(name), or `unknown` with the error if it raised: one failing check (an
    unreadable input, a bug) leaves the other checks their verdicts."""
    try:
        return check(name)
    except Exception as exc:
        return CheckResult(name, "unknown", {"error": f"{type(exc).__name__}: {exc}"})
