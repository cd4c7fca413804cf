"""hudi_reader: Apache Hudi's reader (hudi-rs) as a second judge. The semantics comparison
(which time-travel points and incremental pulls are comparable) on its own, the row
comparison, the verdicts, and end to end on tables the engine wrote."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.table.merge import COMMIT_TIME
from harness.checks.hudi_exclusions import Misfiled
from harness.checks.hudi_read_plan import (
    MAX_PULLS,
    MAX_TIME_TRAVEL,
    Completed,
    incremental_pulls,
    read_limits,
    slice_keys,
    spread,
    time_travel_points,
)
from harness.checks.hudi_reader import diff_rows, hudi_reader


def t(n: int) -> str:
    """A 17-digit instant time."""
    return f"2026010100{n:07d}"


def inst(req: int, comp: int, action="deltacommit", groups=("fg1",)) -> Completed:
    return Completed(t(req), t(comp), action, data=action != "compaction", groups=frozenset(groups))


# --- which time-travel points compare -----------------------------------------------------


def test_as_of_c_is_time_travel_to_the_latest_requested_time_completed_by_c():
    # Pipelined (async): each instant is requested before the previous one completes.
    a, b, c = inst(1, 3), inst(2, 5), inst(4, 6)
    points, skipped = time_travel_points([a, b, c])
    assert points == [(t(3), t(1)), (t(5), t(2)), (t(6), t(4))] and skipped == []


def test_an_instant_requested_earlier_and_completed_later_makes_a_point_incomparable():
    a, b = inst(1, 5), inst(2, 3)  # a was requested first and completed last
    points, skipped = time_travel_points([a, b])
    assert points == [(t(5), t(2))]
    assert skipped == [
        {"as_of": t(3), "hudi_as_of": t(2), "requested_earlier_completed_later": [t(1)]}
    ]


def test_a_pending_compaction_makes_a_point_incomparable():
    log, compaction = inst(1, 3), inst(2, 4, action="compaction")
    points, skipped = time_travel_points([log, compaction])
    assert points == [(t(4), t(2))]
    assert skipped == [{"as_of": t(3), "hudi_as_of": t(1), "compaction_pending": [t(2)]}]


@st.composite
def schedules(draw) -> list[Completed]:
    """Instants whose requested and completion times interleave arbitrarily, all taken from
    one strictly increasing sequence (as the engine generates them)."""
    n = draw(st.integers(1, 7))
    events = []
    for i in range(n):
        start = draw(st.integers(0, 30))
        events += [(start, 0, i), (start + draw(st.integers(0, 30)), 1, i)]
    times: dict[tuple[int, int], int] = {}
    for seq, (_, kind, i) in enumerate(sorted(events)):
        times[(i, kind)] = seq
    return [inst(times[(i, 0)], times[(i, 1)]) for i in range(n)]


@settings(max_examples=300, deadline=None)
@given(schedules())
def test_points_are_exactly_where_some_time_travel_selects_the_as_of_instants(instants):
    """The engine's as-of c reads the instants completed at or before c; hudi-rs's time
    travel to T those requested at or before T (and completed now). time_travel_points
    pairs c with a T selecting the same instants whenever one exists (data instants)."""
    points, skipped = dict(time_travel_points(instants)[0]), time_travel_points(instants)[1]
    requested = sorted(i.requested for i in instants)
    for c in [i.completed for i in instants]:
        engine = {i.requested for i in instants if i.completed <= c}
        matches = [T for T in requested if {r for r in requested if r <= T} == engine]
        assert (c in points) == bool(matches), c
        if c in points:
            assert points[c] in matches
    assert len(points) + len(skipped) == len(instants)
    assert max(i.completed for i in instants) in points  # the snapshot always compares


# --- incremental pulls ---------------------------------------------------------------------


def test_one_pull_per_data_instant_between_consecutive_completion_times():
    a, b, c = inst(1, 5, groups=("fg1",)), inst(2, 3, groups=("fg2",)), inst(6, 7)
    compaction = inst(4, 6, action="compaction", groups=("fg3",))
    pulls, skipped = incremental_pulls([a, b, c, compaction])
    assert [(p.instant, p.begin, p.end) for p in pulls] == [
        (t(2), None, t(3)),
        (t(1), t(3), t(5)),
        (t(6), t(6), t(7)),  # after the compaction's completion: no pull of its own
    ]
    assert skipped == []


def test_a_pull_whose_rows_hudi_rs_files_under_a_later_slice_is_not_compared():
    log = inst(1, 5, groups=("fg1", "fg2"))
    compaction = inst(3, 6, action="compaction", groups=("fg2",))  # requested while inflight
    later = inst(4, 7, groups=("fg2",))  # requested after the compaction: comparable
    pulls, skipped = incremental_pulls([log, compaction, later])
    assert skipped == [{"instant": t(1), "slice_opened_by": [t(3)]}]
    assert [p.instant for p in pulls] == [t(4)]
    other = inst(3, 6, action="compaction", groups=("fg9",))  # another group's: comparable
    assert incremental_pulls([log, other])[1] == []
    overtaker = inst(2, 4, groups=("fg1",))  # requested after, completed before: opens a slice
    assert incremental_pulls([log, overtaker])[1] == [{"instant": t(1), "slice_opened_by": [t(2)]}]


def test_an_overtaking_log_write_moves_nothing_in_a_group_that_has_a_slice_already():
    first = inst(1, 2)  # the first log write to complete in fg1 opens its slice (key t(1))
    log, overtaker = inst(3, 6), inst(4, 5)
    assert slice_keys([first, log, overtaker]) == {"fg1": {t(1)}}
    pulls, skipped = incremental_pulls([first, log, overtaker])
    assert skipped == [] and len(pulls) == 3


def test_a_pending_compaction_no_log_completed_after_is_no_obstacle():
    log, compaction = inst(1, 2), inst(3, 5, action="compaction")
    points, skipped = time_travel_points([log, compaction])
    assert points == [(t(2), t(1)), (t(5), t(3))] and skipped == []


def test_an_archived_instant_is_not_pulled():
    old = Completed(t(1), t(2), "commit", archived=True)
    pulls, skipped = incremental_pulls([old, inst(3, 4)])
    assert [p.instant for p in pulls] == [t(3)]
    assert skipped == [{"instant": t(1), "archived": True}]


def test_nothing_before_the_retention_window_is_compared():
    instants = [inst(1, 2, groups=("a",)), inst(3, 4, groups=("b",)), inst(5, 6, groups=("c",))]
    writes = {t(1): {1: 1}, t(3): {2: 2}, t(5): {3: 3}}
    engine, hudi = ModelReads(instants, writes), ModelReads(instants, writes, by_requested=True)
    r = hudi_reader(instants, engine, hudi, "id", window_from=t(4))
    assert r.verdict == "valid", r.evidence
    assert r.evidence["time_travel"]["compared"] == 2  # t(4), t(6)
    assert r.evidence["incremental"]["compared"] == 1  # (t(4), t(6)]
    assert {"as_of": t(2), "out_of_window": True} in r.evidence["time_travel"]["skipped"]["items"]


def test_spread_keeps_the_last_point():
    assert spread(list(range(10)), 4) == [0, 3, 6, 9]
    assert spread([1, 2], 4) == [1, 2]
    assert spread([1, 2, 3], 1) == [3]


def test_a_large_table_gets_fewer_reads_but_at_least_one_of_each():
    assert read_limits(1000) == (MAX_TIME_TRAVEL, MAX_PULLS)
    points, pulls = read_limits(4_000_000)  # 10 reads of the whole table
    assert points + pulls == 10 and points >= 1 and pulls >= 1
    assert read_limits(10**12) == (1, 1)


# --- comparing rows -------------------------------------------------------------------------


def rows(ids, values, v_type: pa.DataType | None = None) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "v": pa.array(values, v_type or pa.int64())})


def test_same_rows_in_another_order_and_type_agree():
    assert diff_rows(rows([1, 2], [10, 20]), rows([2, 1], [20, 10], pa.int32()), "id") is None
    assert diff_rows(rows([1], [None]), rows([1], [None]), "id") is None


def test_differences_name_the_rows():
    diff = diff_rows(
        rows([1, 2, 3, 4], [10, 20, 30, None]), rows([2, 3, 5, 5, 4], [20, 31, 0, 0, 7]), "id"
    )
    assert diff["only_engine"] == {"count": 1, "keys": [1]}
    assert diff["only_hudi"] == {"count": 2, "keys": [5, 5]}
    assert diff["duplicated_in_hudi"] == {"count": 1, "keys": [5]}
    assert diff["different"]["count"] == 2 and diff["different"]["columns"] == {"v": 2}
    assert diff["different"]["items"][0] == {"key": 3, "engine": {"v": 30}, "hudi": {"v": 31}}
    assert diff["different"]["items"][1] == {"key": 4, "engine": {"v": None}, "hudi": {"v": 7}}


def test_equal_reads_with_a_key_twice_still_disagree():
    """Both readers returning a key twice is a duplicate, not an agreement."""
    twice = rows([1, 2, 1], [10, 20, 10])
    diff = diff_rows(twice, twice, "id")
    assert diff["duplicated_in_engine"] == diff["duplicated_in_hudi"] == {"count": 1, "keys": [1]}


def test_as_many_rows_with_one_value_changed_disagree():
    diff = diff_rows(rows([1, 2], [10, 20]), rows([2, 1], [21, 10]), "id")
    assert diff["different"]["count"] == 1 and diff["different"]["items"][0]["key"] == 2


def test_a_missing_column_is_an_error():
    with pytest.raises(ValueError, match="no column"):
        diff_rows(rows([1], [1]), pa.table({"id": [1]}), "id")


# --- the verdict over two readers -----------------------------------------------------------


@dataclass
class ModelReads:
    """Rows per instant (key -> value); time travel by completion time (the engine) or by
    requested time (hudi-rs), pulls by completion time; `tamper` changes what one reader
    returns."""

    instants: list[Completed]
    writes: dict[str, dict[int, int]]
    by_requested: bool = False
    # key -> what one reader returns instead: a value (of the same instant), a value and a
    # commit time, or None (no row)
    tamper: dict[int, int | tuple[int, str] | None] | None = None
    merge_by: str = "requested"  # every Hudi reader's: the later-requested row wins
    misses: frozenset[str] = frozenset()  # instants its snapshot files elsewhere (hudi-rs)

    def _rows(self, chosen: list[Completed]) -> pa.Table:
        """id, the commit time of the row's instant (a tampered row keeps it), v."""
        state: dict[int, tuple[int, str]] = {}
        for i in sorted(chosen, key=lambda i: getattr(i, self.merge_by)):
            state.update({k: (v, i.requested) for k, v in self.writes[i.requested].items()})
        for k, v in (self.tamper or {}).items():
            if v is None:
                state.pop(k, None)
            elif isinstance(v, tuple):  # an older or later instant's row, where one is read
                if k in state:
                    state[k] = v
            else:
                state[k] = (v, state[k][1] if k in state else t(0))
        keys = sorted(state)
        table = rows(keys, [state[k][0] for k in keys])
        return table.add_column(1, COMMIT_TIME, pa.array([state[k][1] for k in keys]))

    def snapshot(self) -> pa.Table:
        return self._rows([i for i in self.instants if i.requested not in self.misses])

    def _as_of(self, time: str) -> list[Completed]:
        field = "requested" if self.by_requested else "completed"
        return [i for i in self.instants if getattr(i, field) <= time]

    def as_of(self, time: str) -> pa.Table:
        return self._rows(self._as_of(time))

    def without(self, as_of: str | None, file_id: str, logs: frozenset[str]) -> pa.Table:
        """The engine's read of a group without some logs (here: each instant's log is
        named by its requested time)."""
        chosen = self.instants if as_of is None else self._as_of(as_of)
        return self._rows([i for i in chosen if file_id in i.groups and i.requested not in logs])

    def incremental(self, begin: str | None, end: str) -> pa.Table:
        begin = begin or ""
        return self._rows([i for i in self.instants if begin < i.completed <= end])


INSTANTS = [inst(1, 5), inst(2, 3), inst(6, 7)]
WRITES = {t(1): {1: 10, 2: 20}, t(2): {2: 21, 3: 30}, t(6): {4: 40}}
LOGS = frozenset({t(1)})  # the log files of INSTANTS[0] (ModelReads.without)


def test_readers_that_agree_where_comparable_are_valid():
    engine = ModelReads(INSTANTS, WRITES)
    hudi = ModelReads(INSTANTS, WRITES, by_requested=True)
    r = hudi_reader(INSTANTS, engine, hudi, "id")
    assert r.verdict == "valid", r.evidence
    assert r.evidence["time_travel"]["compared"] == 2  # t(1) overtakes t(2) at t(3)
    assert r.evidence["incremental"]["compared"] == 2  # t(2) opened t(1)'s slice


def test_a_row_only_hudi_rs_sees_is_invalid_and_named():
    engine = ModelReads(INSTANTS, WRITES)
    hudi = ModelReads(INSTANTS, WRITES, by_requested=True, tamper={2: 99, 9: 90})
    r = hudi_reader(INSTANTS, engine, hudi, "id")
    assert r.verdict == "invalid"
    snapshot = r.evidence["disagreements"]["items"][0]
    assert snapshot["read"] == "snapshot"
    assert snapshot["only_hudi"]["keys"] == [9]
    assert snapshot["different"]["items"] == [
        {"key": 2, "engine": {COMMIT_TIME: t(2), "v": 21}, "hudi": {COMMIT_TIME: t(2), "v": 99}}
    ]


class Failing(ModelReads):
    def as_of(self, time: str) -> pa.Table:
        raise RuntimeError("cannot read")


def test_a_hudi_rs_error_on_a_read_is_invalid():
    engine = ModelReads(INSTANTS, WRITES)
    r = hudi_reader(INSTANTS, engine, Failing(INSTANTS, WRITES, by_requested=True), "id")
    assert r.verdict == "invalid"
    errors = [d for d in r.evidence["disagreements"]["items"] if "error" in d]
    assert errors and errors[0]["read"] == "time_travel" and "cannot read" in errors[0]["error"]


def test_no_instants_or_an_empty_table_is_unknown():
    empty = ModelReads([], {})
    assert hudi_reader([], empty, empty, "id").verdict == "unknown"
    blank = {t(1): {}, t(2): {}, t(6): {}}
    r = hudi_reader(INSTANTS, ModelReads(INSTANTS, blank), ModelReads(INSTANTS, blank), "id")
    assert r.verdict == "unknown" and "empty" in r.evidence["reason"]


def test_an_engine_read_that_fails_is_never_valid():
    """The engine's own read failing is no disagreement to blame on either reader: it
    propagates, and the runner's per-check guard makes the check unknown with the error."""
    from harness.runner.check_inputs import guarded

    engine = Failing(INSTANTS, WRITES)
    hudi = ModelReads(INSTANTS, WRITES, by_requested=True)
    r = guarded("hudi_reader", lambda _: hudi_reader(INSTANTS, engine, hudi, "id"))
    assert r.verdict == "unknown" and r.evidence == {"error": "RuntimeError: cannot read"}


def test_a_table_outside_the_local_file_system_is_unknown():
    from types import SimpleNamespace

    from harness.checks.hudi_rs import check_table

    storage = SimpleNamespace(root="bucket/t", filesystem=object(), read_bytes=lambda p: b"")
    table = SimpleNamespace(config=SimpleNamespace(key_field="id"), schema=None, storage=storage)
    r = check_table(table, None, frozenset())  # type: ignore[arg-type]
    assert r.verdict == "unknown" and "local tables only" in r.evidence["reason"]


# --- keys the two readers merge in different orders ------------------------------------


def test_a_key_two_instants_wrote_in_crossed_order_is_compared():
    """t(1) was requested before t(2) and completed after it, and both wrote key 2: every
    Hudi reader keeps t(2)'s row (requested last), and so must the engine. An engine that
    merged in completion order (t(1)'s row) disagrees, and the key is named."""
    engine = ModelReads(INSTANTS, WRITES)
    hudi = ModelReads(INSTANTS, WRITES, by_requested=True)
    assert hudi_reader(INSTANTS, engine, hudi, "id").verdict == "valid"
    by_completion = ModelReads(INSTANTS, WRITES, merge_by="completed")
    r = hudi_reader(INSTANTS, by_completion, hudi, "id")
    assert r.verdict == "invalid"
    different = r.evidence["disagreements"]["items"][0]["different"]["items"]
    assert different == [
        {"key": 2, "engine": {COMMIT_TIME: t(1), "v": 20}, "hudi": {COMMIT_TIME: t(2), "v": 21}}
    ]


def test_a_read_that_leaves_more_than_a_tenth_of_its_rows_out_is_unknown():
    """Key 1 of an archived log write hudi-rs files under another slice (`Misfiled`) is left
    out where the rule says: one row in four of the snapshot is past the bound; the same
    key among 20 more rows is inside it. Rows compared and left out are counted."""
    misfiled = Misfiled("fg1", INSTANTS[0], (t(2),), (), pa.array([1], pa.int64()), LOGS)
    engine = ModelReads(INSTANTS, WRITES)
    hudi = ModelReads(INSTANTS, WRITES, by_requested=True, tamper={1: None})
    assert hudi_reader(INSTANTS, engine, hudi, "id").verdict == "invalid"
    r = hudi_reader(INSTANTS, engine, hudi, "id", misfiled=[misfiled])
    assert r.verdict == "unknown", r.evidence
    over = r.evidence["rows"]["reads_over_bound"]["items"]
    assert {"read": "snapshot", "rows": 4, "left_out": 1} in over
    wide = {**WRITES, t(1): {**WRITES[t(1)], **{k: k for k in range(100, 120)}}}
    engine = ModelReads(INSTANTS, wide)
    hudi = ModelReads(INSTANTS, wide, by_requested=True, tamper={1: None})
    r = hudi_reader(INSTANTS, engine, hudi, "id", misfiled=[misfiled])
    assert r.verdict == "valid", r.evidence
    assert r.evidence["rows"]["left_out"] == 3  # key 1 of the snapshot, as of t(5) and t(7)
    assert r.evidence["archived_logs"]["skipped"]["items"][0]["keys"] == {
        "count": 1,
        "keys": [1],
    }


def test_an_excluded_key_is_compared_where_its_difference_is_not_the_predicted_one():
    """The rule predicts hudi-rs's row of key 1 absent (the archived write inserted it); a
    row of that write with another value, or of a later or an older instant, is compared,
    and is a disagreement; absent, it is left out."""
    misfiled = Misfiled("fg1", INSTANTS[0], (t(2),), (), pa.array([1], pa.int64()), LOGS)
    wide = {**WRITES, t(1): {**WRITES[t(1)], **{k: k for k in range(100, 120)}}}
    engine = ModelReads(INSTANTS, wide)
    tampered = ModelReads(INSTANTS, wide, by_requested=True, tamper={1: 99})  # t(1)'s row
    r = hudi_reader(INSTANTS, engine, tampered, "id", misfiled=[misfiled])
    assert r.verdict == "invalid" and r.evidence["rows"]["left_out"] == 0
    for row in ((10, t(6)), (5, t(0))):
        other = ModelReads(INSTANTS, wide, by_requested=True, tamper={1: row})
        r = hudi_reader(INSTANTS, engine, other, "id", misfiled=[misfiled])
        assert r.verdict == "invalid" and r.evidence["rows"]["left_out"] == 0, row
    absent = ModelReads(INSTANTS, wide, by_requested=True, tamper={1: None})
    r = hudi_reader(INSTANTS, engine, absent, "id", misfiled=[misfiled])
    assert r.verdict == "valid", r.evidence
    assert r.evidence["rows"]["left_out"] == 3


# Key 1: t(1) inserted it, t(3) updated it, and the archived log write t(5), which hudi-rs
# files before a compaction requested at t(6) and so misses in the snapshot, updated it
# again; it also inserted key 7. Keys 100-119 keep the two left out inside the bound.
UPDATES = [inst(1, 2), inst(3, 4), inst(5, 7)]
UPDATED = {t(1): {1: 10, **{k: k for k in range(100, 120)}}, t(3): {1: 11}, t(5): {1: 12, 7: 70}}
LOG_WRITE = Misfiled(
    "fg1", UPDATES[2], (t(6),), (), pa.array([1, 7], pa.int64()), frozenset({t(5)})
)


def test_an_update_is_left_out_only_where_hudi_rs_returns_its_exact_predecessor():
    """hudi-rs's snapshot without the log holds key 1's version before it (t(3)'s) and no
    key 7: both left out. A row two versions back (t(1)'s), or of the predecessor's instant
    with another value, or no row, is not what a reader without the log returns: the
    snapshot compares key 1 and disagrees."""
    engine = ModelReads(UPDATES, UPDATED)
    misses = frozenset({t(5)})
    hudi = ModelReads(UPDATES, UPDATED, by_requested=True, misses=misses)
    assert hudi_reader(UPDATES, engine, hudi, "id").verdict == "invalid"
    r = hudi_reader(UPDATES, engine, hudi, "id", misfiled=[LOG_WRITE])
    assert r.verdict == "valid", r.evidence
    assert r.evidence["rows"]["left_out"] == 2  # keys 1 and 7 of the snapshot
    for wrong in ((10, t(1)), (99, t(3)), None):
        other = ModelReads(UPDATES, UPDATED, by_requested=True, misses=misses, tamper={1: wrong})
        r = hudi_reader(UPDATES, engine, other, "id", misfiled=[LOG_WRITE])
        snapshot = [d for d in r.evidence["disagreements"]["items"] if d["read"] == "snapshot"]
        assert r.verdict == "invalid" and len(snapshot) == 1, wrong
        different = [i["key"] for i in snapshot[0].get("different", {}).get("items", [])]
        assert different + snapshot[0].get("only_engine", {}).get("keys", []) == [1], wrong
