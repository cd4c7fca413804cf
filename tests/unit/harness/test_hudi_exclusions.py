"""Misfiled.confirmed (harness/checks/hudi_exclusions.py): a key of an archived log write
is left out of one read only where the engine's row is that write's and the other
reader's is exactly the key's version before it (the engine's read of the group without
the misfiled log), or absent where there was none; any other row is compared."""

from __future__ import annotations

import pyarrow as pa

from engine.table.merge import COMMIT_TIME
from harness.checks.hudi_exclusions import Misfiled
from harness.checks.hudi_read_plan import Completed


def t(n: int) -> str:
    return f"2026010100{n:07d}"


LOG = Completed(t(5), t(7), "deltacommit", groups=frozenset({"fg1"}))
MISFILED = Misfiled("fg1", LOG, (t(6),), (), pa.array([1, 2], pa.int64()), frozenset({"log"}))


def rows(*items: tuple[int, str, int | None]) -> pa.Table:
    """(id, commit time, v) rows."""
    ids, times, values = zip(*items, strict=True) if items else ((), (), ())
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            COMMIT_TIME: pa.array(times, pa.string()),
            "v": pa.array(values, pa.int64()),
        }
    )


# The engine holds the log's rows of keys 1 (an update of t(3)'s row, itself an update of
# t(1)'s) and 2 (an insert); before the log, key 1 was t(3)'s row and key 2 absent.
ENGINE = rows((1, t(5), 12), (2, t(5), 20), (3, t(3), 30))
BEFORE = rows((1, t(3), 11), (3, t(3), 30))


def confirmed(other: pa.Table, before: pa.Table = BEFORE, engine: pa.Table = ENGINE) -> list:
    return sorted(MISFILED.confirmed(engine, other, before, "id").to_pylist())


def test_the_exact_predecessor_and_absence_where_there_was_none_are_left_out():
    assert confirmed(rows((1, t(3), 11), (3, t(3), 30))) == [1, 2]


def test_the_log_s_own_rows_are_nothing_to_leave_out():
    """The other reader agrees with the engine: no difference to excuse, both compared."""
    assert confirmed(ENGINE) == []


def test_an_older_version_that_is_not_the_predecessor_is_compared():
    """Two versions back when a closer one exists, or the predecessor's instant with other
    values: neither is what a reader without the log returns."""
    assert confirmed(rows((1, t(1), 10))) == [2]
    assert confirmed(rows((1, t(3), 99))) == [2]
    assert confirmed(rows((1, t(3), None))) == [2]  # a null is no value the key had


def test_absence_where_the_key_had_a_version_is_compared():
    assert confirmed(rows()) == [2]


def test_a_row_where_the_key_had_none_is_compared():
    assert confirmed(rows((1, t(3), 11), (2, t(1), 20))) == [1]


def test_a_key_twice_on_either_side_is_compared():
    assert confirmed(rows((1, t(3), 11), (1, t(3), 11))) == [2]
    engine = rows((1, t(5), 12), (1, t(5), 12), (2, t(5), 20))
    assert confirmed(rows((1, t(3), 11)), engine=engine) == [2]


def test_a_key_whose_engine_row_is_another_instant_s_is_compared():
    engine = rows((1, t(8), 13), (2, t(5), 20))
    assert confirmed(rows((1, t(3), 11)), engine=engine) == [2]


def test_rows_that_do_not_cast_to_the_engine_s_types_confirm_nothing():
    other = pa.table({"id": ["x"], COMMIT_TIME: [t(3)], "v": [11]})
    assert confirmed(other) == []
