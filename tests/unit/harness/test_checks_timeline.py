"""The timeline check: one order of generation (the engine's sequence numbers) for requested
and completion times alike; missing or contradictory order evidence is never `valid`."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from engine.config import Safety, TableConfig
from engine.errors import WriteConflictError
from engine.table import Table
from harness.checks import timeline
from harness.runner.final_state import _last_generated, _timeline_instants


def _t(n: int) -> str:
    return f"20260101000000{n:03d}"


def instant(n: int, **overrides: Any) -> dict[str, Any]:
    """Instant n: requested at time/seq 2n+1, completed at time/seq 2n+2."""
    req, done = 2 * n + 1, 2 * n + 2
    base = {
        "requested": _t(req),
        "completed": _t(done),
        "action": "commit",
        "state": "completed",
        "files_exist": True,
        "missing_files": [],
        "committed_count": 1,
        "rolled_back": False,
        "generated": [
            {"kind": "requested", "time": _t(req), "seq": req},
            {"kind": "completion", "time": _t(done), "seq": done},
        ],
    }
    return {**base, **overrides}


def last(seq: int) -> dict[str, Any]:
    return {"time": _t(seq), "seq": seq}


def test_a_clean_timeline_is_valid() -> None:
    rolled = instant(3, state="inflight", completed=None, committed_count=0, rolled_back=True)
    rolled["generated"] = rolled["generated"][:1]
    r = timeline([instant(0), instant(1), instant(2), rolled], ["o.parquet"], last(7))
    assert r.verdict == "valid", r.evidence
    assert r.evidence["orphan_files"] == 1 and r.evidence["rolled_back"] == 1
    assert r.evidence["generation_order"]["numbered"] == 7


def test_interleaved_requested_and_completion_times_are_one_sequence() -> None:
    # Instant 1 is requested (seq 2) before instant 0 completes (seq 3) with a smaller time:
    # separately both requested and completion times increase; as one sequence they do not.
    a = instant(0)
    b = instant(1)
    a["generated"][1] = {"kind": "completion", "time": _t(2), "seq": 3}
    b["generated"][0] = {"kind": "requested", "time": _t(3), "seq": 2}
    r = timeline([a, b], None, last(4))
    assert r.verdict == "invalid"
    [v] = r.evidence["not_increasing"]["items"]
    assert (v["time"], v["seq"], v["kind"]) == (_t(2), 3, "completion")
    assert (v["not_after"]["time"], v["not_after"]["seq"]) == (_t(3), 2)


def test_order_follows_the_sequence_not_the_list_order() -> None:
    r = timeline([instant(2), instant(0), instant(1)], None, last(6))
    assert r.verdict == "valid", r.evidence


def test_a_time_equal_to_an_earlier_one_is_not_increasing() -> None:
    b = instant(1)
    b["generated"][0]["time"] = _t(2)  # the same time as instant 0's completion
    r = timeline([instant(0), {**b, "requested": _t(2)}], None, last(4))
    assert r.verdict == "invalid" and r.evidence["not_increasing"]["count"] == 1


def test_a_missing_sequence_number_is_unknown_never_valid() -> None:
    b = instant(1)
    b["generated"][1]["seq"] = None
    r = timeline([instant(0), b], None, last(4))
    assert r.verdict == "unknown" and "no sequence number" in r.evidence["reason"]
    no_generated = {k: v for k, v in instant(1).items() if k != "generated"}
    assert timeline([instant(0), no_generated], None, last(4)).verdict == "unknown"


def test_missing_numbers_do_not_hide_a_violation() -> None:
    b = instant(1)
    b["generated"][0]["time"] = _t(0)  # below instant 0's completion
    c = instant(2)
    c["generated"][1]["seq"] = None
    r = timeline([instant(0), {**b, "requested": _t(0)}, c], None, last(6))
    assert r.verdict == "invalid" and r.evidence["not_increasing"]["count"] == 1


@pytest.mark.parametrize(
    ("record", "reason"),
    [
        ({"error": "corrupt instant file .truetime: not a generation record"}, "unreadable"),
        (None, "missing"),
        ({"time": _t(9), "seq": None}, "no sequence number"),
        (last(2), "below 4"),  # the count went back: the record was reset
    ],
)
def test_a_corrupt_or_inconsistent_generation_record_is_unknown(record, reason) -> None:
    r = timeline([instant(0), instant(1)], None, record)
    assert r.verdict == "unknown" and reason in r.evidence["reason"]


def test_one_number_for_two_times_is_contradictory() -> None:
    b = instant(1)
    b["generated"][0]["seq"] = 2  # the number instant 0's completion has
    r = timeline([instant(0), b], None, last(4))
    assert r.verdict == "unknown" and "more than one time" in r.evidence["reason"]


def test_a_rollback_keeps_the_order_of_what_it_removed() -> None:
    rb = instant(2, action="rollback")
    # The removed instant was requested (seq 4) at a time above the rollback's own.
    rb["generated"].append({"kind": "requested", "time": _t(99), "seq": 4})
    r = timeline([instant(0), instant(1, generated=instant(1)["generated"][:1]), rb], None, last(6))
    assert r.verdict == "invalid"
    assert [v["time"] for v in r.evidence["not_increasing"]["items"]] == [_t(5), _t(6)]


def test_the_same_generation_seen_twice_counts_once() -> None:
    archived_copy = instant(0)
    r = timeline([instant(0), archived_copy, instant(1)], None, last(4))
    assert r.evidence["generation_order"]["numbered"] == 4
    assert r.evidence["requested_duplicates"]["count"] == 1  # two instants listed, one time


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        (instant(1, files_exist=False, missing_files=["fg1/a.parquet"]), "missing_files"),
        (instant(1, committed_count=2), "committed_twice"),
        (instant(1, rolled_back=True), "committed_after_rollback"),
        (instant(1, completed=None), "completed_without_completion_time"),
    ],
)
def test_timeline_violations(bad: dict[str, Any], field: str) -> None:
    r = timeline([instant(0), bad], None, last(4))
    assert r.verdict == "invalid" and r.evidence[field]["count"] == 1


def _read(files: dict[str, int]) -> dict[str, Any]:
    return {"reader": "reader:0", "read_kind": "snapshot", "rows": 3, "files": files}


def test_a_read_of_a_file_no_completed_instant_owns_is_invalid() -> None:
    owner = instant(0, files=["a.parquet"])
    clean = _read({"a.parquet": 3})
    assert timeline([owner], None, last(2), [clean]).verdict == "valid"
    r = timeline([owner], ["o.parquet"], last(2), [clean, _read({"a.parquet": 2, "o.parquet": 1})])
    assert r.verdict == "invalid"
    [item] = r.evidence["orphans_read"]["items"]
    assert (item["file"], item["rows"], item["reader"]) == ("o.parquet", 1, "reader:0")
    # A rolled-back instant owns nothing: its file is an orphan even if it is gone now.
    gone = instant(1, files=["b.parquet"], rolled_back=True, state="inflight", completed=None)
    r = timeline([owner, gone], None, last(4), [_read({"b.parquet": 3})])
    assert [i["file"] for i in r.evidence["orphans_read"]["items"]] == ["b.parquet"]


def test_reads_are_not_judged_against_an_instant_that_lists_no_files() -> None:
    r = timeline([instant(0)], None, last(2), [_read({"a.parquet": 3})])
    assert r.verdict == "unknown" and "list no files" in r.evidence["reason"]


def test_an_empty_timeline_is_unknown() -> None:
    assert timeline([]).verdict == "unknown"


def _base(group: str, name: str, prev: str | None, same_instant: bool = False) -> dict[str, Any]:
    return {
        "file_id": group,
        "file_name": name,
        "prev_file": prev,
        "prev_same_instant": same_instant,
    }


def test_a_merge_of_a_superseded_base_is_a_lost_update() -> None:
    # Instant 2 merged f0 although instant 1 (completed before it) had superseded f0.
    first = instant(0, writes=[_base("g", "f0", None)])
    second = instant(1, writes=[_base("g", "f1", "f0")])
    stale = instant(2, writes=[_base("g", "f2", "f0")])
    result = timeline([first, second, stale], None, last(6))
    assert result.verdict == "invalid"
    [item] = result.evidence["stale_base"]["items"]
    assert item == {
        "file_group": "g",
        "instant": _t(5),
        "completed": _t(6),
        "merged": "f0",
        "newest_then": "f1",
    }


def test_a_chain_of_merges_and_a_second_flush_are_not_lost_updates() -> None:
    # Each merge supersedes the newest base; a second eager flush merged the instant's own
    # first file (dropped at commit), which the rule cannot judge and does not flag.
    chain = [
        instant(0, writes=[_base("g", "f0", None), _base("h", "h0", None)]),
        instant(1, writes=[_base("g", "f1", "f0")]),
        instant(2, writes=[_base("g", "f2", "f2a", same_instant=True), _base("h", "h1", "h0")]),
    ]
    result = timeline(chain, None, last(6))
    assert result.verdict == "valid", result.evidence
    assert result.evidence["stale_base"]["count"] == 0


def test_two_writers_without_occ_merging_one_base_are_caught(tmp_path) -> None:
    """Engine case 2 (same merge target) on a real table: both transactions merge the same
    slice; without OCC both commit and the first one's update is lost."""
    path = str(tmp_path / "t")
    Table.create(path, TableConfig(file_groups=1), max_skew_ms=0).close()

    def race(occ: bool) -> str:
        safety = Safety(occ=occ)
        seed = Table.open(path, writer_id="seed", max_skew_ms=0, safety=safety)
        with seed.transaction() as tx:
            tx.write(pa.table({"id": [1], "v": [0]}))
        one = Table.open(path, writer_id="w1", max_skew_ms=0, safety=safety).transaction()
        two = Table.open(path, writer_id="w2", max_skew_ms=0, safety=safety).transaction()
        one.write(pa.table({"id": [1], "v": [1]}))  # both merge the seed's slice
        two.write(pa.table({"id": [1], "v": [2]}))
        two.commit()
        try:
            one.commit()
        except WriteConflictError:
            one.abort()
        t = Table.open(path)
        return timeline(_timeline_instants(t), None, _last_generated(t)).verdict

    assert race(occ=True) == "valid"
    assert race(occ=False) == "invalid"
