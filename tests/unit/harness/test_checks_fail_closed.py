"""Fail closed: every checker says `unknown` (or `invalid` where a violation is proven),
never `valid`, when its evidence is missing, partial or contradictory; an unreadable history
or one check that raises makes only the checks concerned unknown."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from bank_opening import commit_opening_balances

from engine.config import TableConfig
from engine.table import Table
from harness.checks import (
    CheckResult,
    bank,
    exactly_once,
    exactly_once_upserts,
    fingerprint,
    isolation,
    timeline,
    unique_keys,
)
from harness.checks.unique_keys import unique_keys_result
from harness.history import HistoryError, HistoryWriter, load_events, read_events
from harness.pipeline.events import SCHEMA
from harness.runner import check_inputs
from harness.runner.analysis import _distrust
from harness.runner.final_state import FinalState, _timeline_instants
from harness.runner.rundir import RunPaths
from harness.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[3]


def batch(batch_id: int, start: int, end: int, certain: bool = True) -> dict[str, Any]:
    return {"batch_id": batch_id, "start_offset": start, "end_offset": end, "certain": certain}


# --- exactly_once and exactly_once_upserts --------------------------------------------------


@pytest.mark.parametrize("visible", [[], list(range(20))], ids=["none", "all"])
def test_exactly_once_without_a_certain_batch_is_unknown(visible: list[int]) -> None:
    """All-or-nothing holds for an empty table too: with nothing certain, nothing is shown."""
    r = exactly_once([batch(0, 0, 10, False), batch(1, 10, 20, False)], visible)
    assert r.verdict == "unknown" and "no certain batch" in r.evidence["reason"]


def test_exactly_once_with_only_empty_certain_batches_is_unknown() -> None:
    assert exactly_once([batch(0, 5, 5), batch(1, 5, 15, False)], []).verdict == "unknown"


def test_exactly_once_without_a_certain_batch_still_finds_a_partial_one() -> None:
    r = exactly_once([batch(0, 0, 10, False)], list(range(4)))
    assert r.verdict == "invalid" and r.evidence["partial_batches"]["count"] == 1


def test_exactly_once_on_an_empty_table_where_rows_were_expected_is_invalid() -> None:
    r = exactly_once([batch(0, 0, 10), batch(1, 10, 20)], pa.array([], pa.int64()))
    assert r.verdict == "invalid" and r.evidence["lost"]["count"] == 20


def test_exactly_once_with_contradictory_batches_is_unknown() -> None:
    r = exactly_once([batch(0, 0, 10), batch(0, 0, 11)], list(range(10)))
    assert r.verdict == "unknown"


@pytest.mark.parametrize("bad", [batch(1, 10, 5), batch(1, -5, 0)], ids=["reversed", "negative"])
def test_exactly_once_with_an_impossible_range_is_unknown(bad: dict[str, Any]) -> None:
    """A reversed range would count negative rows as certain: [0, 10) and [10, 5) would
    pass as 5 certain rows with only 0..9 visible."""
    r = exactly_once([batch(0, 0, 10), bad], list(range(10)))
    assert r.verdict == "unknown" and "offsets run from 0 upwards" in r.evidence["reason"]
    assert exactly_once_upserts([batch(0, 0, 6), bad], [0, 1, 2], [3, 4, 5], key_of).verdict == (
        "unknown"
    )


def key_of(offsets: np.ndarray) -> np.ndarray:
    return offsets % 3


def test_upserts_without_a_certain_batch_are_unknown() -> None:
    uncertain = [batch(0, 0, 6, False)]
    assert exactly_once_upserts(uncertain, [], [], key_of).verdict == "unknown"
    assert exactly_once_upserts(uncertain, [0, 1, 2], [3, 4, 5], key_of).verdict == "unknown"


def test_upserts_on_an_empty_table_where_rows_were_expected_are_invalid() -> None:
    r = exactly_once_upserts([batch(0, 0, 6)], [], [], key_of)
    assert r.verdict == "invalid" and r.evidence["lost"]["count"] == 3


def test_upserts_with_key_and_event_columns_of_different_lengths_are_unknown() -> None:
    r = exactly_once_upserts([batch(0, 0, 6)], [0, 1, 2], [3, 4], key_of)
    assert r.verdict == "unknown" and "lengths" in r.evidence["reason"]


def test_upserts_with_a_null_key_are_invalid() -> None:
    r = exactly_once_upserts([batch(0, 0, 6)], pa.array([0, 1, None]), [3, 4, 5], key_of)
    assert r.verdict == "invalid" and r.evidence["null_keys"] == 1


# --- unique_keys ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "keys", [pa.array([], pa.int64()), pa.array([None, None], pa.int64())], ids=["empty", "null"]
)
def test_unique_keys_without_a_key_is_unknown(keys: pa.Array) -> None:
    r = unique_keys(keys)
    assert r.verdict == "unknown" and r.evidence["reason"]


def test_unique_keys_counted_on_spark_fail_closed_too() -> None:
    assert unique_keys_result(0, 0, 0, 0, []).verdict == "unknown"
    assert unique_keys_result(3, 3, 0, 0, []).verdict == "unknown"
    assert unique_keys_result(3, 1, 0, 0, []).verdict == "invalid"
    assert unique_keys_result(3, 0, 0, 0, []).verdict == "valid"


# --- timeline (owned elsewhere: only the case it already fails closed on) -------------------


def test_timeline_without_instants_is_unknown() -> None:
    assert timeline([]).verdict == "unknown"


# --- bank -----------------------------------------------------------------------------------

GOOD = {"reader": "reader:0", "read_kind": "snapshot", "total": 80, "accounts": 8, "rows": 8}


def test_bank_reads_without_a_total_are_unknown() -> None:
    r = bank([GOOD, {"reader": "reader:0", "read_kind": "snapshot", "rows": 8}], 80, 8)
    assert r.verdict == "unknown" and r.evidence["without_total"] == 1


def test_bank_reads_without_the_accounts_they_saw_are_unknown_not_invalid() -> None:
    """Missing evidence is no violation: a read with its total but no account count."""
    r = bank([GOOD, {k: v for k, v in GOOD.items() if k != "accounts"}], 80, 8)
    assert r.verdict == "unknown" and r.evidence["without_total"] == 1
    # A pull need not see every account: it records none, and that is no missing evidence.
    pull = {"reader": "reader:0", "read_kind": "incremental", "total": 0, "expected_total": 0}
    assert bank([GOOD, {**pull, "expected_accounts": None}], 80, 8).verdict == "valid"


def test_bank_reads_that_saw_no_account_are_unknown() -> None:
    empty = [{**GOOD, "total": 0, "accounts": 0, "rows": 0}] * 3
    assert bank(empty, 0, 0).verdict == "unknown"


@pytest.mark.parametrize(
    ("reads", "failed"),
    [
        ([], [{"reader": "reader:0", "read_kind": "snapshot", "error": "OSError: gone"}]),
        # reader:1's as-of reads all failed: atomicity as of T went untested for it
        ([GOOD], [{"reader": "reader:1", "read_kind": "as_of", "error": "OSError: gone"}]),
        # a failure outside any one read is never matched by a success
        ([GOOD], [{"reader": "reader:0", "read_kind": None, "error": "RuntimeError: x"}]),
    ],
    ids=["all-failed", "one-kind-never-succeeded", "no-kind"],
)
def test_bank_with_failed_reads_is_unknown(reads: list[dict], failed: list[dict]) -> None:
    r = bank(reads, 80, 8, failed)
    assert r.verdict == "unknown" and r.evidence["failed_reads"]["count"] == 1


@pytest.mark.parametrize("kind", ["snapshot", "as_of", "incremental"])
def test_bank_with_one_failed_read_among_successes_is_unknown(kind: str) -> None:
    """A read that raised is a balance nobody saw (issue 26 item 3): one is enough, even
    where other reads of its kind succeeded."""
    failed = [{"reader": "reader:0", "read_kind": kind, "error": "OSError: slow"}]
    pull = {"reader": "reader:0", "read_kind": "incremental", "total": 0, "expected_total": 0}
    reads = [GOOD, {**GOOD, "read_kind": "as_of"}, {**pull, "expected_accounts": None}]
    assert bank(reads, 80, 8).verdict == "valid"  # the same reads without the failure
    r = bank(reads, 80, 8, failed)
    assert r.verdict == "unknown"
    assert "1 read(s) failed" in r.evidence["reason"]
    assert r.evidence["failed_reads"]["count"] == 1
    assert r.evidence["failed_reads"]["never_succeeded"] == []
    assert r.evidence["failed_reads"]["items"][0]["error"] == "OSError: slow"


# --- isolation ------------------------------------------------------------------------------

COMPLETED = {"i1": "t1"}


def read(**extra: Any) -> dict[str, Any]:
    return {
        "reader": "reader:0",
        "read_kind": "snapshot",
        "read_at": "t1",
        "rows": 2,
        "fingerprint": fingerprint([1, 2]),
        "instants": {"i1": 2},
        **extra,
    }


def test_isolation_on_complete_evidence_is_valid() -> None:
    assert isolation([read(), read()], [], COMPLETED).verdict == "valid"


@pytest.mark.parametrize("missing", ["read_at", "instants", "rows"])
def test_isolation_reads_without_their_evidence_are_unknown(missing: str) -> None:
    partial = {k: v for k, v in read().items() if k != missing}
    r = isolation([read(), partial], [], COMPLETED)
    assert r.verdict == "unknown" and r.evidence["unjudged"]["count"] == 1


@pytest.mark.parametrize(
    "instants", [{"i1": 1}, {"i1": 1, "i2": 2}, {"i1": "2"}], ids=["fewer", "more", "not-a-count"]
)
def test_isolation_reads_whose_instants_do_not_account_for_their_rows_are_unknown(
    instants: dict[str, Any],
) -> None:
    """A row no instant accounts for could be a dirty one: such a read shows no absence."""
    r = isolation([read(), read(instants=instants)], [], {**COMPLETED, "i2": "t1"})
    assert r.verdict == "unknown" and r.evidence["unaccounted_rows"]["count"] == 1
    assert "do not account for" in r.evidence["reason"]


def test_isolation_with_every_read_failed_is_unknown() -> None:
    failed = [{"reader": "reader:0", "read_kind": "snapshot", "error": "OSError: gone"}] * 3
    r = isolation([], [], COMPLETED, failed)
    assert r.verdict == "unknown" and r.evidence["failed_reads"]["count"] == 3
    assert "every read failed" in r.evidence["reason"]


def test_isolation_with_one_kind_that_never_succeeded_is_unknown() -> None:
    failed = [{"reader": "reader:0", "read_kind": "as_of", "as_of": "t1", "error": "E"}]
    r = isolation([read()], [], COMPLETED, failed)
    assert r.verdict == "unknown"
    assert r.evidence["failed_reads"]["never_succeeded"] == [
        {"reader": "reader:0", "read_kind": "as_of", "failed": 1}
    ]


def test_isolation_where_no_read_returned_a_row_is_unknown() -> None:
    empty = read(rows=0, instants={}, fingerprint=fingerprint([]))
    assert isolation([empty, empty], [], COMPLETED).verdict == "unknown"


@pytest.mark.parametrize(
    "failure",
    [
        {"read_kind": "snapshot"},
        {"read_kind": "as_of", "as_of": "t1"},
        {"read_kind": "incremental", "begin": None, "end": "t1"},
    ],
    ids=["snapshot", "as_of", "incremental"],
)
def test_isolation_with_one_failed_read_among_successes_is_unknown(
    failure: dict[str, Any],
) -> None:
    """Every kind succeeded at least once, and one read failed: its answer was never
    judged, so isolation is unknown (issue 26 item 3), not valid."""
    reads = [
        read(),
        read(read_kind="as_of", as_of="t1"),
        read(read_kind="incremental", begin=None, end="t1"),
    ]
    repeated = reads[1:]
    assert isolation(reads, repeated, COMPLETED).verdict == "valid"
    failed = [{"reader": "reader:0", **failure, "error": "OSError: slow"}]
    r = isolation(reads, repeated, COMPLETED, failed)
    assert r.verdict == "unknown", r.evidence
    assert "1 read(s) failed" in r.evidence["reason"]
    assert r.evidence["failed_reads"]["count"] == 1
    assert r.evidence["failed_reads"]["never_succeeded"] == []


# --- the history ----------------------------------------------------------------------------


def history(tmp_path: Path, **files: str | bytes) -> Path:
    """A history dir whose writer recorded one batch, plus the given raw files."""
    writer = HistoryWriter(tmp_path, "driver")
    writer.record("batch", batch_id=0, start_offset=0, end_offset=10)
    for name, content in files.items():
        path = tmp_path / f"events-{name}.jsonl"
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return tmp_path


def test_a_torn_last_line_is_no_problem(tmp_path: Path) -> None:
    """A process killed mid-write leaves its last line without a newline."""
    events, problems = load_events(history(tmp_path, w='{"t": 1, "kind": "x"}\n{"t": 2, "ki'))
    assert problems == [] and [e["kind"] for e in events] == ["x", "batch"]


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ('{"t": 1, "kind": "x"}\n{"t": 2, "ki\n{"t": 3, "kind": "y"}\n', "w.jsonl:2: not JSON"),
        ("this is not an event log", "w.jsonl:1: not JSON"),
        (b"\x80\x81\xfe binary", "unreadable (UnicodeDecodeError"),
        ("[1, 2]\n", "not a JSON object"),
        ('{"kind": "x"}\n', "`t` is None"),
        ('{"t": true, "kind": "x"}\n', "`t` is True"),
        ('{"t": 1}\n', "`kind` is None"),
        ('{"t": 1, "kind": "batch", "batch_id": 3, "end_offset": 9}\n', "['start_offset']"),
        ('{"t": 1, "kind": "read", "reader": "reader:0"}\n', "['read_kind']"),
    ],
    ids=[
        "corrupt-middle-line",
        "not-json",
        "binary",
        "not-an-object",
        "no-time",
        "bool-time",
        "no-kind",
        "batch-field",
        "read-field",
    ],
)
def test_unreadable_history_lines_surface(tmp_path: Path, content: str, problem: str) -> None:
    events, problems = load_events(history(tmp_path, w=content))
    assert len(problems) == 1 and problem in problems[0], problems
    assert any(e["kind"] == "batch" for e in events)  # the readable rest is kept
    with pytest.raises(HistoryError, match="1 unreadable history line"):
        read_events(tmp_path)


def test_an_unreadable_history_makes_the_checks_that_read_events_unknown() -> None:
    results = [
        CheckResult("exactly_once", "valid", {"observed_rows": 10}),
        CheckResult("timeline", "invalid", {"reason": "x"}),
        CheckResult("unique_keys", "valid", {"rows": 10}),
        CheckResult("isolation", "valid", {}),
        CheckResult("bank", "valid", {}),
    ]
    out = {r.name: r for r in _distrust(results, ["events-w.jsonl:2: not JSON"])}
    assert out["unique_keys"] == results[2]  # reads only the table: keeps its verdict
    for name in ("exactly_once", "timeline", "isolation", "bank"):
        assert out[name].verdict == "unknown"
        assert out[name].evidence["history_problems"]["count"] == 1
    assert out["timeline"].evidence["verdict_from_readable_events"] == "invalid"
    assert out["timeline"].evidence["reason"] == "history lines could not be read; x"
    assert out["exactly_once"].evidence["observed_rows"] == 10
    assert _distrust(results, []) == results


# --- one check that raises ------------------------------------------------------------------


def test_one_check_that_raises_is_unknown_and_the_others_keep_their_verdicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scenario = load_scenario(ROOT / "scenarios/bank.yaml", ["checks=[timeline, bank, isolation]"])
    accounts = scenario.source.accounts
    table = Table.create(str(tmp_path / "t"), TableConfig(file_groups=2), SCHEMA, max_skew_ms=0)
    as_of = commit_opening_balances(table, accounts)
    final = FinalState(
        read_rows=lambda: table.snapshot(columns=["id", "event_id"]),
        table=table,
        instants=_timeline_instants(table),
    )
    paths = RunPaths(tmp_path / "run", tmp_path / "t")

    def verdicts() -> dict[str, CheckResult]:
        return {r.name: r for r in check_inputs.run_checks(scenario, [as_of], final, paths)}

    clean = verdicts()
    assert clean["isolation"].verdict == "valid", clean["isolation"].evidence

    def unreachable(*args: Any, **kwargs: Any) -> None:
        raise OSError("storage unreachable")

    monkeypatch.setattr(check_inputs, "perform_read", unreachable)  # isolation's repeats
    broken = verdicts()
    assert broken["isolation"].verdict == "unknown"
    assert broken["isolation"].evidence == {"error": "OSError: storage unreachable"}
    assert broken["bank"] == clean["bank"] and broken["timeline"] == clean["timeline"]


def test_bank_reads_of_a_table_before_its_first_commit_are_unknown_not_invalid() -> None:
    """An empty table read before anything completed shows no balance: not a moved total
    (invalid) but no evidence (unknown); once a commit completed, a read that misses the
    accounts is a violation again."""
    before = {"reader": "final", "read_kind": "snapshot", "read_at": None, "rows": 0}
    r = bank([{**before, "total": 0, "accounts": 0}], 80, 8)
    assert r.verdict == "unknown" and r.evidence["before_first_commit"] == 1
    assert "no read saw a committed table" in r.evidence["reason"]
    after = {**before, "read_at": "20261122101010101", "total": 0, "accounts": 0}
    assert bank([after], 80, 8).verdict == "invalid"
