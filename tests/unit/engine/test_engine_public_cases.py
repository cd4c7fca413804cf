"""DESIGN.md public engine cases 1-4, each with the safety mechanism on and off."""

from __future__ import annotations

import pytest
from engine_helpers import as_dict, rows

from engine.clock import ManualClock
from engine.config import Safety, TableConfig
from engine.errors import DuplicateKeyError, InstantExistsError, WriteConflictError
from engine.layout.index import DynamicIndex, bucket_file_id
from engine.table import Table

ONE_GROUP = TableConfig(table_type="cow", file_groups=1)


# -- case 1: no concurrency control --------------------------------------------------------


def test_case1_occ_aborts_second_writer_from_empty_base(make_table):
    w1 = make_table(ONE_GROUP)
    w2 = make_table()
    i1, i2 = w1.start_instant(), w2.start_instant()
    s1 = w1.write_files(i1, rows([1]))
    s2 = w2.write_files(i2, rows([2]))
    w1.commit(i1, s1)
    with pytest.raises(WriteConflictError) as err:
        w2.commit(i2, s2)
    assert i1.requested_time in str(err.value) and "fg-0000" in str(err.value)
    w2.rollback(i2)
    assert as_dict(w1.snapshot()) == {1: 10}


def test_case1_mor_log_appends_do_not_conflict_and_both_stay_visible(make_table):
    # Two writers that only append log files to one group lose nothing: readers merge the
    # logs in completion-time order, so OCC lets both commit (non-blocking, as in Hudi).
    w1 = make_table(TableConfig(table_type="mor", file_groups=1))
    w2 = make_table()
    i1, i2 = w1.start_instant(), w2.start_instant()
    s1 = w1.write_files(i1, rows([1]))
    s2 = w2.write_files(i2, rows([2]))
    w1.commit(i1, s1)
    w2.commit(i2, s2)
    assert as_dict(w1.snapshot()) == {1: 10, 2: 20}


def test_case1_without_occ_one_write_is_lost(make_table):
    w1 = make_table(ONE_GROUP, safety=Safety(occ=False))
    w2 = make_table(safety=Safety(occ=False))
    i1, i2 = w1.start_instant(), w2.start_instant()
    s1 = w1.write_files(i1, rows([1]))
    s2 = w2.write_files(i2, rows([2]))
    w1.commit(i1, s1)
    w2.commit(i2, s2)  # both commit: nothing stops them
    visible = as_dict(w1.snapshot())
    assert len(visible) == 1  # one of the two committed writes is gone


# -- case 2: same merge target -------------------------------------------------------------


def _slice_50(make_table, safety):
    base = make_table(ONE_GROUP, safety=safety)
    with base.transaction() as tx:
        tx.write(rows([1, 2, 3]))
    return base


def test_case2_earlier_writer_aborts_when_later_one_committed_first(make_table):
    _slice_50(make_table, Safety())
    w1, w2 = make_table(), make_table()
    i100 = w1.start_instant()
    i101 = w2.start_instant()
    s100 = w1.write_files(i100, rows([1], [111]))  # both merge onto slice "50"
    s101 = w2.write_files(i101, rows([2], [222]))
    w2.commit(i101, s101)
    with pytest.raises(WriteConflictError) as err:
        w1.commit(i100, s100)
    assert i101.requested_time in str(err.value)
    assert as_dict(w1.snapshot()) == {1: 10, 2: 222, 3: 30}


def test_case2_without_occ_an_update_is_lost(make_table):
    unsafe = Safety(occ=False)
    _slice_50(make_table, unsafe)
    w1, w2 = make_table(safety=unsafe), make_table(safety=unsafe)
    i100 = w1.start_instant()
    i101 = w2.start_instant()
    s100 = w1.write_files(i100, rows([1], [111]))
    s101 = w2.write_files(i101, rows([2], [222]))
    w2.commit(i101, s101)
    w1.commit(i100, s100)
    state = as_dict(w1.snapshot())
    assert state[1] != 111 or state[2] != 222  # both committed, one update is not visible


# -- case 3: duplicate key (dynamic index) ---------------------------------------------------


def _writers_preferring_different_groups(groups: int) -> tuple[str, str]:
    index = DynamicIndex({}, [bucket_file_id(b) for b in range(groups)])
    first = index.group_for_new("writer-a")
    for n in range(100):
        if index.group_for_new(f"writer-b{n}") != first:
            return "writer-a", f"writer-b{n}"
    raise AssertionError("no writer pair with different preferred groups")


@pytest.mark.parametrize("op", ["upsert", "insert"])
def test_case3_pk_check_aborts_second_insert_of_same_new_key(make_table, op):
    a, b = _writers_preferring_different_groups(4)
    w1 = make_table(TableConfig(file_groups=4, index="dynamic"), writer_id=a)
    w2 = make_table(writer_id=b)
    i1, i2 = w1.start_instant(), w2.start_instant()
    s1 = w1.write_files(i1, rows([42, 1]), op=op)
    s2 = w2.write_files(i2, rows([42, 2]), op=op)
    assert {s.file_id for s in s1}.isdisjoint({s.file_id for s in s2})  # no OCC overlap
    w1.commit(i1, s1)
    with pytest.raises(DuplicateKeyError) as err:
        w2.commit(i2, s2)
    assert "42" in str(err.value) and err.value.keys == [42]
    w2.rollback(i2)
    assert sorted(w1.snapshot().column("id").to_pylist()) == [1, 42]


def test_case3_without_pk_check_key_is_readable_twice(make_table):
    a, b = _writers_preferring_different_groups(4)
    unsafe = Safety(pk_check=False)
    w1 = make_table(TableConfig(file_groups=4, index="dynamic"), writer_id=a, safety=unsafe)
    w2 = make_table(writer_id=b, safety=unsafe)
    i1, i2 = w1.start_instant(), w2.start_instant()
    s1 = w1.write_files(i1, rows([42]))
    s2 = w2.write_files(i2, rows([42]))
    w1.commit(i1, s1)
    w2.commit(i2, s2)
    assert w1.snapshot().column("id").to_pylist() == [42, 42]


def test_dynamic_index_routes_known_keys_to_their_group(make_table):
    t = make_table(TableConfig(file_groups=4, index="dynamic"))
    with t.transaction() as tx:
        first = tx.write(rows([1, 2, 3]))
    with t.transaction() as tx:
        second = tx.write(rows([2], [99]))
    assert [s.file_id for s in second] == [first[0].file_id]
    assert second[0].new_keys == []
    assert as_dict(t.snapshot()) == {1: 10, 2: 99, 3: 30}


# -- case 4: timestamp collision ---------------------------------------------------------------


def _collide(make_table, safety: Safety):
    """Two writers whose clocks are frozen at the same millisecond (keys 1 and 2 land in
    different buckets, so OCC has nothing to say)."""
    w1 = make_table(TableConfig(file_groups=8), safety=safety, clock=ManualClock(1_700_000_000_000))
    w2 = make_table(safety=safety, clock=ManualClock(1_700_000_000_000))
    return w1, w2


def test_case4_put_if_absent_makes_second_writer_fail(make_table):
    w1, w2 = _collide(make_table, Safety(strict_monotonic=False))
    i1 = w1.start_instant()
    with pytest.raises(InstantExistsError) as err:
        w2.start_instant()
    assert i1.requested_time in str(err.value) and ".commit.requested" in str(err.value)
    w1.commit(i1, w1.write_files(i1, rows([1])))
    assert as_dict(w1.snapshot()) == {1: 10}


@pytest.mark.parametrize("safety", [Safety(), Safety(put_if_absent=False)], ids=["all", "strict"])
def test_case4_strict_monotonic_gives_distinct_times(make_table, safety):
    w1, w2 = _collide(make_table, safety)
    i1, i2 = w1.start_instant(), w2.start_instant()
    assert i2.requested_time > i1.requested_time
    s1 = w1.write_files(i1, rows([1]))
    w1.commit(i1, s1)
    w2.commit(i2, w2.write_files(i2, rows([2])))
    assert as_dict(Table.open(w1.path).snapshot()) == {1: 10, 2: 20}


def test_case4_without_both_the_first_writers_data_is_lost(make_table):
    # Markers off too: with them, the colliding writers share one marker directory and the
    # first commit deletes the second's files (test_markers.py), a different anomaly.
    unsafe = Safety(put_if_absent=False, strict_monotonic=False, markers=False)
    w1, w2 = _collide(make_table, unsafe)
    i1, i2 = w1.start_instant(), w2.start_instant()
    assert i1.requested_time == i2.requested_time
    s1 = w1.write_files(i1, rows([1]))
    s2 = w2.write_files(i2, rows([2]))
    w1.commit(i1, s1)
    w2.commit(i2, s2)  # silently overwrites w1's completed instant
    reader = Table.open(w1.path)
    assert as_dict(reader.snapshot()) == {2: 20}  # w1 committed, yet its row is gone
    assert len(reader.timeline.completed()) == 1
