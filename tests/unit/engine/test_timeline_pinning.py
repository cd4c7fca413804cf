"""While the table lock is held the timeline is listed once: later reloads are no-ops, and
the holder's own changes are still seen."""

import pyarrow as pa
import pytest

from engine.clock import ManualClock
from engine.config import Safety, TableConfig
from engine.errors import InstantExistsError
from engine.table import Table

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.int64())])


def _table(tmp_path):
    table = Table.create(str(tmp_path / "t"), TableConfig(file_groups=2), SCHEMA, max_skew_ms=0)
    lists: list[str] = []
    table.storage.hooks.append(lambda op, path: lists.append(path) if op == "list" else None)
    return table, lists


def _rows(start: int) -> pa.Table:
    return pa.table({"id": pa.array(range(start, start + 5), pa.int64()), "v": [1] * 5})


def test_a_commit_lists_the_timeline_once_under_the_lock(tmp_path):
    table, lists = _table(tmp_path)
    instant = table.start_instant()
    stats = table.write_files(instant, _rows(0), op="insert")
    other = Table.open(table.storage.root, max_skew_ms=0)
    with other.locked():  # someone else held the lock since: the commit must look again
        pass
    lists.clear()
    table.commit(instant, stats)
    assert len([p for p in lists if p.endswith("timeline")]) == 1


def test_a_hold_right_after_the_tables_own_lists_nothing(tmp_path):
    """Nobody held the lock between this table's two holds: its timeline and generation
    record are what it left, so neither is read again (and the commit still sees it all)."""
    table, lists = _table(tmp_path)
    reads: list[str] = []
    table.storage.hooks.append(lambda op, path: reads.append(path) if op == "read" else None)
    instant = table.start_instant()
    stats = table.write_files(instant, _rows(0), op="insert")
    lists.clear()
    reads.clear()
    table.commit(instant, stats)
    assert [p for p in lists if p.endswith("timeline")] == []
    assert [p for p in reads if p.endswith(".truetime")] == []
    assert table.timeline.reload().completed()[-1].requested_time == instant.requested_time


def test_reloads_list_again_once_the_lock_is_released(tmp_path):
    table, lists = _table(tmp_path)
    other = Table.open(table.storage.root, max_skew_ms=0)
    with table.locked():
        table.timeline.reload()
        table.timeline.reload()
    assert len([p for p in lists if p.endswith("timeline")]) == 1
    # Another writer commits after the lock was released: the next reload must see it.
    instant = other.start_instant()
    other.commit(instant, other.write_files(instant, _rows(0), op="insert"))
    assert table.timeline.reload().completed()[-1].requested_time == instant.requested_time
    assert len([p for p in lists if p.endswith("timeline")]) == 2


def test_the_holders_own_instants_are_seen_while_pinned(tmp_path):
    table, _ = _table(tmp_path)
    first = table.start_instant()
    second = table.start_instant()
    table.commit(second, table.write_files(second, _rows(10), op="insert"))
    table.commit(first, table.write_files(first, _rows(0), op="insert"))
    completed = [i.requested_time for i in table.timeline.reload().completed()]
    assert completed == [second.requested_time, first.requested_time]
    assert sorted(table.snapshot()["id"].to_pylist()) == list(range(5)) + list(range(10, 15))


def test_a_time_this_table_used_since_its_last_listing_is_still_refused(tmp_path):
    """A hold that trusts its cache does not list: put-if-absent still refuses a time the
    table itself used under another action (strict monotonicity off, a stopped clock)."""
    clock = ManualClock(1_700_000_000_000)
    table = Table.create(
        str(tmp_path / "t"),
        TableConfig(file_groups=2),
        SCHEMA,
        clock=clock,
        safety=Safety(strict_monotonic=False),
        max_skew_ms=0,
    )
    first = table.start_instant()  # this hold lists the timeline
    clock.advance(10)
    second = table.start_instant(action="commit")  # this one trusts the cache
    with pytest.raises(InstantExistsError):
        table.start_instant(action="deltacommit")  # the same time as the second
    pending = [i.requested_time for i in table.timeline.reload().pending()]
    assert pending == [first.requested_time, second.requested_time]


def test_a_hold_that_generates_nothing_leaves_no_stale_count_for_the_next(tmp_path):
    """The locks suite's coordinator-crash-file-s3 unknown: the driver cleaned (its hold
    numbered a time), a batch writer numbered the next time, the driver archived (a hold
    after someone else's: not fresh, and it numbers nothing), then committed in a hold
    right after its own archival (fresh). That commit trusted the count it knew from the
    clean and handed out the batch writer's number again."""
    table, _ = _table(tmp_path)
    other = Table.open(table.storage.root, max_skew_ms=0)
    table.start_instant()  # the clean: this handle now knows the count
    theirs = other.generator.generate_stamped()  # the batch writer numbers a time
    with table.locked():  # the archival: after someone else's hold, numbers nothing
        pass
    with table.locked():  # the commit: right after this table's own hold
        mine = table.generator.generate_stamped(locked=True)
    assert mine.seq > theirs.seq
