"""Turn a run's history and final table into the checkers' inputs, and run the checks."""

from __future__ import annotations

import functools
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import pyarrow.compute as pc

from engine.table import Table
from harness.checks import (
    CheckResult,
    bank,
    exactly_once,
    exactly_once_upserts,
    isolation,
    timeline,
    unique_keys,
)
from harness.checks.batch_writes import batch_writes
from harness.checks.hudi_rs import check_table as hudi_reader
from harness.checks.retention import excused, in_window
from harness.history_events import Kind
from harness.pipeline.events import OPENING_BALANCE, upsert_keys
from harness.pipeline.session import local_master
from harness.runner.driver_config import event_spec
from harness.runner.final_state import FinalState
from harness.runner.ground_truth import GroundTruth, expected_batches
from harness.runner.rundir import RunPaths
from harness.runner.spark_checks import SPARK_ABOVE_ROWS, SparkCheckJob, run_spark_checks
from harness.scenario import Scenario
from harness.systems.hudi.java_reader_check import check_table as hudi_java_reader
from harness.workload.batch_writers import KEY_BASE
from harness.workload.reads import perform_read, sweep_reads

if TYPE_CHECKING:
    import pyarrow as pa


def _of_kind(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["kind"] == kind]


def _stream_rows(final: FinalState) -> pa.Table:
    """Rows the stream wrote, and rows without an event id. Batch writers' and the bank's
    opening rows carry event id -1 (no event); a null one is no such row but a bug, kept
    for the checker to count (a `>= 0` filter alone drops nulls before it sees them)."""
    event_ids = final.rows.column("event_id")
    return final.rows.filter(pc.or_kleene(pc.is_null(event_ids), pc.greater_equal(event_ids, 0)))


def _exactly_once(
    scenario: Scenario, batches: list[dict[str, Any]], final: FinalState
) -> CheckResult:
    rows = _stream_rows(final)
    if scenario.source.mode == "bank":
        # Bank legs have their own ids (2 * event, 2 * event + 1): the null event ids are
        # counted apart, as a leg's id may look right without one.
        return exactly_once(batches, rows.column("id"), rows.column("event_id").null_count)
    if scenario.source.mode != "upsert":
        return exactly_once(batches, rows.column("event_id"))
    spec = event_spec(scenario)
    return exactly_once_upserts(
        batches,
        rows.column("id"),
        rows.column("event_id"),
        lambda offsets: upsert_keys(offsets, spec),
    )


def _with_batch_writes(result: CheckResult, i: Inputs) -> CheckResult:
    """exactly_once with the batch writers' rule (harness/checks/batch_writes.py) when
    batch writers recorded rows: invalid if either is."""
    recorded = _of_kind(i.events, Kind.TXN_ROWS)
    if not recorded:
        return result
    rows = i.final.rows
    mine = rows.filter(pc.less_equal(rows.column("id"), -KEY_BASE))
    table = dict(zip(mine.column("id").to_pylist(), mine.column("amount").to_pylist(), strict=True))
    bad, evidence = batch_writes(recorded, _of_kind(i.events, Kind.TXN_COMMIT), table)
    verdict = "invalid" if bad else result.verdict
    return CheckResult(result.name, verdict, {**result.evidence, "batch_writers": evidence})


def _timeline_input(events: list[dict[str, Any]], final: FinalState) -> list[dict[str, Any]]:
    # The order of generation is not taken from events (their wall-clock `t` is what a clock
    # fault moves, and a killed process loses them): the table's instant files carry each
    # time's generation sequence number (final.instants[...]["generated"]).
    commits = _of_kind(events, Kind.COMMIT) + _of_kind(events, Kind.TXN_COMMIT)
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


def _isolation_inputs(
    events: list[dict[str, Any]], final: FinalState, is_bank: bool
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, str], list[dict[str, Any]]]:
    """The run's reads, each as-of read and pull made again on the final table, the
    completion time of every instant that completed and was not rolled back, and the
    reads a clean moved out of the retention window (not repeatable, not compared)."""
    completed = {
        i["requested"]: i["completed"]
        for i in final.instants
        if i["state"] == "completed" and not i["rolled_back"]
    }
    table = _engine_table(final)
    reads = _of_kind(events, Kind.READ)
    repeated, out_of_window = [], []
    seen = set()
    for r in reads:
        key = (r["read_kind"], r.get("as_of"), r.get("begin"), r.get("end"))
        if r["read_kind"] == "snapshot" or key in seen:
            continue
        seen.add(key)
        point = r.get("as_of") if r["read_kind"] == "as_of" else r.get("begin")
        if not in_window(final.retention.start, point):
            out_of_window.append(r)  # a clean since deleted what it read: not repeatable
            continue
        repeated.append(
            perform_read(
                table,
                r["read_kind"],
                as_of=r.get("as_of"),
                begin=r.get("begin"),
                end=r.get("end"),
                bank=is_bank,
            )
        )
    return reads, repeated, completed, out_of_window


def _engine_table(final: FinalState) -> Table:
    """The engine's table, for the checks that declare they need it (run_checks skips them
    on the raw_parquet ceiling, which has none)."""
    if final.table is None:
        raise ValueError("this check needs the engine's table (the raw_parquet sink has none)")
    return final.table


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
    names: list[str] = [c for c in scenario.checks if c in WHOLE_TABLE]
    if not names or check_engine(scenario, final) != "spark":
        return {}
    table = _engine_table(final)  # check_engine chose spark: there is one
    on_phase(f"checks: {', '.join(names)} on spark (a Spark job: tens of seconds)")
    job = SparkCheckJob(
        table_path=str(paths.table),
        as_of=table.timeline.reload().last_completion_time(),
        checks=names,
        mode=scenario.source.mode,
        batches=truth.batches,
        event_spec=event_spec(scenario).to_dict(),
        master=local_master(scenario.engine.writers, 1),
    )
    results = run_spark_checks(job, paths.control, paths.logs / "checks-spark.log")
    return {r.name: truth.judge(r) if r.name == "exactly_once" else r for r in results}


@dataclass
class Inputs:
    """What the checks draw on. The costly parts (the ground truth, the Spark job) are
    computed on first use, by the first check that needs them, inside its guard."""

    scenario: Scenario
    events: list[dict[str, Any]]
    final: FinalState
    paths: RunPaths
    on_phase: Callable[[str], None]

    @functools.cached_property
    def truth(self) -> GroundTruth:
        # Which batches must be visible: Spark's checkpoint location (see ground_truth).
        return expected_batches(self.scenario, self.events, self.paths.checkpoint)

    @functools.cached_property
    def on_spark(self) -> dict[str, CheckResult]:
        """The whole-table checks' results from Spark, when check_engine chose it."""
        return _on_spark(self.scenario, self.truth, self.final, self.paths, self.on_phase)

    @property
    def reads(self) -> list[dict[str, Any]]:
        return _of_kind(self.events, Kind.READ)

    @property
    def failed_reads(self) -> list[dict[str, Any]]:
        """Every read that raised, but those out of the cleaner's window as the judge
        recomputes it that failed on a file a clean was allowed to delete (the reader's own
        `read_out_of_window` label is not taken on trust)."""
        window = self.final.retention
        late = _of_kind(self.events, Kind.READ_OUT_OF_WINDOW)
        unexcused = [r for r in late if not excused(r, window.start, window.deletable)]
        return [*_of_kind(self.events, Kind.READ_ERROR), *unexcused]


# What a check needs: the engine's table (not the raw_parquet ceiling), the whole final
# table (on Spark when it is large), the history's events, its reads among them, and
# Spark's checkpoint (the ground truth of which batches committed).
Need = Literal["engine_table", "whole_table", "events", "reads", "checkpoint"]


@dataclass(frozen=True)
class Check:
    name: str
    needs: frozenset[Need]
    run: Callable[[Inputs], CheckResult]  # the pyarrow path, in the runner

    @property
    def reads_history(self) -> bool:
        """Judges the history's events: unknown when some of its lines were unreadable."""
        return bool(self.needs & {"events", "reads"})


def _exactly_once_check(i: Inputs) -> CheckResult:
    return i.truth.judge(_exactly_once(i.scenario, i.truth.batches, i.final))


def _timeline_check(i: Inputs) -> CheckResult:
    instants = _timeline_input(i.events, i.final)
    # The run's reads, judged for rows of files no completed instant owns.
    return timeline(instants, i.final.orphan_files, i.final.last_generated, i.reads)


def _isolation_check(i: Inputs) -> CheckResult:
    is_bank = i.scenario.source.mode == "bank"
    reads, repeated, completed, out_of_window = _isolation_inputs(i.events, i.final, is_bank)
    return isolation(reads, repeated, completed, i.failed_reads, out_of_window)


def _bank_check(i: Inputs) -> CheckResult:
    window_from = i.final.retention.start
    sweep = sweep_reads(_engine_table(i.final), random.Random(i.scenario.seed), window_from)
    accounts = i.scenario.source.accounts
    return bank([*i.reads, *sweep], accounts * OPENING_BALANCE, accounts, i.failed_reads)


CHECKS: dict[str, Check] = {
    c.name: c
    for c in (
        Check(
            "exactly_once", frozenset({"whole_table", "events", "checkpoint"}), _exactly_once_check
        ),
        Check(
            "unique_keys",
            frozenset({"whole_table"}),
            lambda i: unique_keys(i.final.rows.column("id")),
        ),
        Check("timeline", frozenset({"engine_table", "events"}), _timeline_check),
        Check("isolation", frozenset({"engine_table", "reads"}), _isolation_check),
        Check("bank", frozenset({"engine_table", "reads"}), _bank_check),
        # Apache Hudi's readers re-read the table: hudi-rs in process, Java Hudi in a JVM.
        Check(
            "hudi_reader",
            frozenset({"engine_table"}),
            lambda i: hudi_reader(
                _engine_table(i.final), i.final.retention.start, i.final.retention.deletable
            ),
        ),
        Check(
            "hudi_java_reader",
            frozenset({"engine_table"}),
            lambda i: hudi_java_reader(
                _engine_table(i.final), i.final.retention.start, i.paths.root / "hudi-java-reads"
            ),
        ),
    )
}
WHOLE_TABLE = tuple(n for n, c in CHECKS.items() if "whole_table" in c.needs)


def run_checks(
    scenario: Scenario,
    events: list[dict[str, Any]],
    final: FinalState,
    paths: RunPaths,
    on_phase: Callable[[str], None] = lambda _: None,
) -> list[CheckResult]:
    """The scenario's checks, in its order, each under its own guard. on_phase: told which
    check runs (the terminal's status line)."""
    inputs = Inputs(scenario, events, final, paths, on_phase)

    def check(name: str) -> CheckResult:
        on_phase(f"checks: {name}")
        if name not in CHECKS:
            raise ValueError(f"no checker named {name!r}")
        spec = CHECKS[name]
        if "whole_table" not in spec.needs:
            return spec.run(inputs)
        result = inputs.on_spark.get(name) or spec.run(inputs)
        engine = "spark" if name in inputs.on_spark else "pyarrow"
        if name == "exactly_once":
            result = _with_batch_writes(result, inputs)
        return CheckResult(name, result.verdict, {**result.evidence, "engine": engine})

    def applies(name: str) -> bool:  # the raw_parquet ceiling has no engine table
        spec = CHECKS.get(name)
        return final.table is not None or spec is None or "engine_table" not in spec.needs

    return [guarded(name, check) for name in scenario.checks if applies(name)]


def guarded(name: str, check: Callable[[str], CheckResult]) -> CheckResult:
    """check(name), or `unknown` with the error if it raised: one failing check (an
    unreadable input, a bug) leaves the other checks their verdicts."""
    try:
        return check(name)
    except Exception as exc:
        return CheckResult(name, "unknown", {"error": f"{type(exc).__name__}: {exc}"})
