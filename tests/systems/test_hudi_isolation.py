"""`isolation` on Hudi (harness/systems/hudi/isolation.py): each read Hudi's reader made is
the replay, in completion order, of the incremental pulls of the commits it should see."""

from __future__ import annotations

import pyarrow as pa

from harness.systems.hudi.isolation import check_isolation
from harness.systems.hudi.read_table import CompletedInstant, HudiReads

A, B, C = (
    CompletedInstant("0001", "0002"),
    CompletedInstant("0003", "0004"),
    CompletedInstant("0005", "0006"),
)


def _t(*rows: tuple[int, int, str]) -> pa.Table:
    ids, events, times = zip(*rows, strict=True) if rows else ((), (), ())
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "event_id": pa.array(events, pa.int64()),
            "_hoodie_commit_time": pa.array(times, pa.string()),
        }
    )


def _reads(**changes: object) -> HudiReads:
    """An upsert table: A writes keys 1, 2; B updates key 1; C writes key 3."""
    a, b, c = [(1, 10, "0001"), (2, 20, "0001")], [(1, 11, "0003")], [(3, 30, "0005")]
    reads = HudiReads(
        snapshot=_t((1, 11, "0003"), (2, 20, "0001"), (3, 30, "0005")),
        as_of={
            "0001": _t(*a),
            "0003": _t((1, 11, "0003"), (2, 20, "0001")),
            "0005": _t((1, 11, "0003"), (2, 20, "0001"), (3, 30, "0005")),
        },
        incremental={("0", "0002"): _t(*a), ("0002", "0004"): _t(*b), ("0004", "0006"): _t(*c)},
    )
    for name, value in changes.items():
        setattr(reads, name, value)
    return reads


def test_reads_that_replay_whole_commits_in_order_are_valid() -> None:
    result = check_isolation(_reads(), [A, B, C])
    assert result.verdict == "valid", result.evidence
    assert result.evidence["reads"] == {"as_of": 3, "incremental": 3}


def test_a_row_of_an_instant_that_never_completed_is_a_dirty_read() -> None:
    snapshot = _t((1, 11, "0003"), (2, 20, "0001"), (3, 30, "0005"), (9, 90, "0000"))
    result = check_isolation(_reads(snapshot=snapshot), [A, B, C])
    kinds = {p["kind"] for p in result.evidence["violations"]["items"]}
    assert result.verdict == "invalid" and "dirty read" in kinds


def test_time_travel_that_shows_half_a_commit_or_the_future_is_invalid() -> None:
    fractured = _reads().as_of | {"0003": _t((1, 10, "0001"), (2, 20, "0001"))}  # B missing
    result = check_isolation(_reads(as_of=fractured), [A, B, C])
    (problem,) = result.evidence["violations"]["items"]
    assert problem["read"] == "as_of/0003" and problem["missing"]["count"] == 1
    future = _reads().as_of | {"0001": _t((1, 10, "0001"), (2, 20, "0001"), (3, 30, "0005"))}
    assert check_isolation(_reads(as_of=future), [A, B, C]).verdict == "invalid"


def test_a_pull_with_another_commit_s_rows_and_a_missing_pull() -> None:
    pulls = _reads().incremental | {("0002", "0004"): _t((1, 11, "0003"), (3, 30, "0005"))}
    result = check_isolation(_reads(incremental=pulls), [A, B, C])
    kinds = {p["kind"] for p in result.evidence["violations"]["items"]}
    assert "rows of another commit in a pull" in kinds
    gone = {k: v for k, v in _reads().incremental.items() if k != ("0004", "0006")}
    assert check_isolation(_reads(incremental=gone), [A, B, C]).verdict == "unknown"
    assert check_isolation(_reads(snapshot=None), [A, B, C]).verdict == "unknown"


def test_the_later_completed_of_two_writes_to_a_key_must_be_what_the_snapshot_shows() -> None:
    """Two commits wrote key 1 with the earlier-requested one completing last (an OCC
    failure: the zombie lock holder): a snapshot with the other's row breaks the order."""
    late = CompletedInstant("0001", "0006")
    early = CompletedInstant("0003", "0004")
    reads = HudiReads(
        snapshot=_t((1, 11, "0003")),
        as_of={"0001": _t((1, 10, "0001")), "0003": _t((1, 11, "0003"))},
        incremental={("0", "0004"): _t((1, 11, "0003")), ("0004", "0006"): _t((1, 10, "0001"))},
    )
    result = check_isolation(reads, [early, late])
    reads_named = {p["read"] for p in result.evidence["violations"]["items"]}
    assert result.verdict == "invalid" and "snapshot" in reads_named
