"""Table behaviour: create/open, writes, commits, rollback, heartbeats, reads."""

from __future__ import annotations

import pyarrow as pa
import pytest
from engine_helpers import as_dict, rows

from engine.clock import AdjustableClock, SystemClock
from engine.config import Safety, TableConfig
from engine.errors import (
    CorruptFileError,
    InstantRolledBackError,
    InstantStateError,
    MissingKeyColumnError,
    NotATableError,
    RollbackError,
    SchemaMismatchError,
    TableExistsError,
    WriteConflictError,
)
from engine.table import Table, WriteStat
from engine.table.heartbeat import HEARTBEAT_DIR


def test_create_open_errors(tmp_path, make_table):
    with pytest.raises(NotATableError, match=str(tmp_path / "nope")):
        Table.open(str(tmp_path / "nope"))
    t = make_table()
    with pytest.raises(TableExistsError, match=t.path):
        Table.create(t.path, TableConfig())
    assert Table.open(t.path).config == TableConfig()


def test_schema_and_key_validation(tmp_path):
    schema = pa.schema([("id", pa.int64()), ("v", pa.int64())])
    t = Table.create(str(tmp_path / "t"), TableConfig(), schema, max_skew_ms=0)
    i = t.start_instant()
    with pytest.raises(MissingKeyColumnError, match="'id'"):
        t.write_files(i, pa.table({"v": [1]}))
    with pytest.raises(MissingKeyColumnError, match="null"):
        t.write_files(i, pa.table({"id": [1, None], "v": [1, 2]}))
    with pytest.raises(
        SchemaMismatchError, match=r"missing columns \['v'\].*unknown columns \['w'\]"
    ):
        t.write_files(i, pa.table({"id": [1], "w": [1]}))
    with pytest.raises(SchemaMismatchError, match="'v' has type string"):
        t.write_files(i, pa.table({"id": [1], "v": ["x"]}))
    stats = t.write_files(i, pa.table({"v": pa.array([5], pa.int32()), "id": [1]}))  # safe cast
    t.commit(i, stats)
    assert t.snapshot().schema == schema


def test_schema_is_learned_from_the_first_commit(make_table):
    t = make_table()
    assert t.snapshot().num_rows == 0
    with t.transaction() as tx:
        tx.write(rows([1]))
    with t.transaction() as tx, pytest.raises(SchemaMismatchError):
        tx.write(pa.table({"id": [2], "other": ["x"]}))
    assert t.snapshot().schema.names == ["id", "v"]


def test_write_stat_round_trips_json(make_table):
    t = make_table()
    i = t.start_instant()
    (stat,) = t.write_files(i, rows([1]), write_token="0-1-0")
    assert WriteStat.from_dict(stat.to_dict()) == stat
    assert t.commit(i, [stat.to_dict()]) > i.requested_time


def test_second_eager_flush_supersedes_first_file(make_table):
    t = make_table(TableConfig(file_groups=1))
    i = t.start_instant()
    first = t.write_files(i, rows([1, 2]), write_token="0-1-0")
    second = t.write_files(i, rows([2, 3], [200, 300]), write_token="0-2-0", prior=first)
    assert second[0].prev_file == first[0].file_name
    t.commit(i, first + second)
    assert as_dict(t.snapshot()) == {1: 10, 2: 200, 3: 300}
    meta = t.timeline.read_metadata(i.requested_time)
    assert meta.superseded == [first[0].file_name] and meta.num_files == 1


def test_uncommitted_and_orphan_files_are_never_read(make_table):
    t = make_table(TableConfig(file_groups=2))
    i = t.start_instant()
    crashed = t.write_files(i, rows([1, 2, 3]), write_token="0-0-0")  # attempt 0 died
    retried = t.write_files(i, rows([1, 2]), write_token="0-0-1")
    assert t.snapshot().num_rows == 0  # nothing is visible before commit
    t.commit(i, retried)
    assert as_dict(t.snapshot()) == {1: 10, 2: 20}
    # The crashed attempt's files are never read, and its markers had them deleted before
    # the instant completed (tests/unit/engine/test_markers.py: kept with markers off).
    assert crashed and t.orphan_files() == []


def test_commit_refuses_missing_or_torn_files(make_table):
    t = make_table()
    i = t.start_instant()
    stats = t.write_files(i, rows([1, 2, 3]))
    with open(t.storage.full_path(stats[0].file_name), "r+b") as f:
        f.truncate(10)
    with pytest.raises(CorruptFileError, match=stats[0].file_name):
        t.commit(i, stats)
    t.storage.delete(stats[0].file_name)
    with pytest.raises(CorruptFileError, match="missing"):
        t.commit(i, stats)


def test_commit_once_and_reserved_metadata(make_table):
    t = make_table()
    i = t.start_instant()
    stats = t.write_files(i, rows([1]))
    with pytest.raises(Exception, match="reserved"):
        t.commit(i, stats, {"stats": []})
    t.commit(i, stats, {"checkpoint_id": 7, "source_offset": 99})
    meta = t.timeline.read_metadata(i.requested_time)
    assert meta.extra["checkpoint_id"] == 7 and meta.extra["source_offset"] == 99
    assert meta.writer_id == t.writer_id and meta.num_writes == 1
    with pytest.raises(InstantStateError, match="already completed"):
        t.commit(i, stats)


def test_rollback_pending_and_forced_completed(make_table):
    t = make_table()
    with t.transaction() as tx:
        tx.write(rows([1]))
    i = t.start_instant()
    stats = t.write_files(i, rows([2]))
    rb = t.rollback(i)
    assert rb.action == "rollback" and rb.is_completed
    assert not any(t.storage.exists(s.file_name) for s in stats)
    assert t.timeline.is_rolled_back(i.requested_time) and t.pending_instants() == []
    assert t.rollback(i) is None  # idempotent
    with pytest.raises(InstantRolledBackError):
        t.commit(i, stats)
    with pytest.raises(RollbackError, match="completed"):
        t.rollback(tx.instant)
    t.rollback(tx.instant, force=True)
    assert t.snapshot().num_rows == 0


def test_transaction_aborts_on_error(make_table):
    t = make_table()
    with pytest.raises(RuntimeError), t.transaction() as tx:
        tx.write(rows([1]))
        raise RuntimeError("boom")
    assert t.timeline.is_rolled_back(tx.instant.requested_time)
    assert t.snapshot().num_rows == 0 and t.orphan_files() == []


def test_lazy_rollback_only_touches_expired_heartbeats(make_table):
    clock = AdjustableClock(SystemClock())
    cleaner = make_table(clock=clock, heartbeat_expiry_s=5)
    writer = make_table(heartbeat_expiry_s=5)
    live = writer.start_instant()
    assert writer.storage.exists(f"{HEARTBEAT_DIR}/{live.requested_time}")
    assert cleaner.rollback_failed_writes() == []
    clock.jump_ms(6_000)  # the writer stopped beating 6 s ago, as the cleaner sees it
    assert cleaner.rollback_failed_writes() == [live.requested_time]
    with pytest.raises(InstantRolledBackError):
        writer.commit(live, [])


def test_eager_rollback_kills_live_writers(make_table):
    writer = make_table()
    eager = make_table(safety=Safety(lazy_rollback=False))
    live = writer.start_instant()
    stats = writer.write_files(live, rows([1]))
    assert eager.rollback_failed_writes() == [live.requested_time]
    with pytest.raises(InstantRolledBackError):
        writer.commit(live, stats)


def test_heartbeat_thread_keeps_instant_alive(make_table):
    import time

    writer = make_table(heartbeat_interval_s=0.05)
    live = writer.start_instant()
    first = writer.heartbeats.last_beat_ms(live.requested_time)
    time.sleep(0.2)
    assert writer.heartbeats.last_beat_ms(live.requested_time) > first
    writer.commit(live, writer.write_files(live, rows([1])))
    assert writer.heartbeats.last_beat_ms(live.requested_time) is None


def test_incremental_returns_late_completing_instant_in_next_pull(make_table):
    t = make_table(TableConfig(file_groups=4))
    early = t.start_instant()
    early_stats = t.write_files(early, rows([1]))
    with t.transaction() as tx:
        tx.write(rows([2]))
    first_pull_end = tx.completion_time
    assert as_dict(t.incremental(None, first_pull_end)) == {2: 20}
    done = t.commit(early, early_stats)  # requested before, completed after the first pull
    assert as_dict(t.incremental(first_pull_end, done)) == {1: 10}
    assert t.incremental(done).num_rows == 0


def test_incremental_excludes_carried_rows_and_keeps_latest(make_table):
    t = make_table(TableConfig(file_groups=1))
    with t.transaction() as tx:
        tx.write(rows([1, 2]))
    start = tx.completion_time
    with t.transaction() as tx:
        tx.write(rows([1], [11]))
    with t.transaction() as tx:
        tx.write(rows([1], [111]))
    assert as_dict(t.incremental(start)) == {1: 111}
    meta = t.incremental(start, with_meta=True)
    assert meta.column("_hoodie_commit_time").to_pylist() == [tx.instant.requested_time]


def test_cow_insert_is_append_mode(make_table):
    w1, w2 = make_table(TableConfig(file_groups=1)), make_table()
    i1, i2 = w1.start_instant(), w2.start_instant()
    s1 = w1.write_files(i1, rows([1]), op="insert")
    s2 = w2.write_files(i2, rows([2]), op="insert")
    assert s1[0].file_id != s2[0].file_id
    w1.commit(i1, s1)
    w2.commit(i2, s2)  # no conflict: new file groups
    assert as_dict(w1.snapshot()) == {1: 10, 2: 20}


def test_ordering_field_precombines_a_batch(make_table):
    t = make_table(TableConfig(ordering_field="ts", file_groups=2))
    with t.transaction() as tx:
        tx.write(pa.table({"id": [1, 1, 1], "ts": [5, 9, 7], "v": [50, 90, 70]}))
    assert t.snapshot().to_pydict() == {"id": [1], "ts": [9], "v": [90]}


def test_snapshot_columns_and_meta(make_table):
    t = make_table()
    with t.transaction() as tx:
        tx.write(rows([1]))
    assert t.snapshot(columns=["v"]).column_names == ["v"]
    assert t.snapshot(with_meta=True).column_names == [
        "id",
        "v",
        "_hoodie_commit_time",
        "_hoodie_commit_seqno",
        "_hoodie_record_key",
        "_hoodie_partition_path",
        "_hoodie_file_name",
        "_hoodie_is_deleted",
    ]
    with pytest.raises(KeyError, match="nope"):
        t.snapshot(columns=["nope"])


def test_start_instant_reports_timing(make_table):
    t = make_table(max_skew_ms=20)
    i = t.start_instant()
    assert i.timing.truetime_sleep_ms >= 19 and t.last_instant_timing == i.timing
    assert t.pending_instants()[0].requested_time == i.requested_time


def test_transaction_rolls_back_when_its_commit_conflicts(make_table):
    w1, w2 = make_table(TableConfig(file_groups=1)), make_table()
    tx2 = w2.transaction()
    tx2.begin()
    with w1.transaction() as tx1:
        tx1.write(rows([1]))
    with pytest.raises(WriteConflictError), tx2:
        tx2.write(rows([2]))
    assert w2.timeline.is_rolled_back(tx2.instant.requested_time)
    assert w2.pending_instants() == []


def test_incremental_delete_markers_only_on_request(make_table):
    t = make_table(TableConfig(table_type="mor", file_groups=2))
    with t.transaction() as tx:
        tx.write(rows([1, 2]))
    start = tx.completion_time
    with t.transaction() as tx:
        tx.write(rows([1]), op="delete")
        tx.write(rows([3]))
    assert as_dict(t.incremental(start, with_meta=True)) == {3: 30}
    marked = t.incremental(start, include_deletes=True).sort_by("id").to_pydict()
    assert marked["id"] == [1, 3] and marked["_hoodie_is_deleted"] == [True, False]


def test_commit_succeeds_when_cleanup_after_the_commit_point_fails(make_table):
    t = make_table()
    i = t.start_instant()
    stats = t.write_files(i, rows([1]))

    def no_deletes(op, path):
        if op == "delete":
            raise OSError("injected delete failure")

    t.storage.hooks.append(no_deletes)
    done = t.commit(i, stats)
    t.storage.hooks.clear()
    fresh = Table.open(t.path)
    assert fresh.timeline.completion_time_of(i.requested_time) == done
    assert fresh.pending_instants() == [] and as_dict(fresh.snapshot()) == {1: 10}


def test_rollback_finishes_when_pending_files_survived(make_table):
    t = make_table()
    i = t.start_instant()
    t.write_files(i, rows([1]))
    failing = {"on": True}

    def fail_pending_delete(op, path):
        if failing["on"] and op == "delete" and path.endswith(".inflight"):
            raise OSError("injected")

    t.storage.hooks.append(fail_pending_delete)
    with pytest.raises(OSError):
        t.rollback(i)
    failing["on"] = False
    assert t.timeline.is_rolled_back(i.requested_time)
    with pytest.raises(InstantRolledBackError):
        t.commit(i, [])
    assert t.rollback(i) is None and t.pending_instants() == []


def test_interrupted_rollback_is_finished_by_failed_write_cleaning(make_table):
    t = make_table()
    i = t.start_instant()
    stats = t.write_files(i, rows([1]))

    def crash_on_data_delete(op, path):
        if op == "delete" and path.endswith(".parquet"):
            raise OSError("crash mid-rollback")

    t.storage.hooks.append(crash_on_data_delete)
    with pytest.raises(OSError):
        t.rollback(i)
    t.storage.hooks.clear()
    (pending_rb,) = [p for p in t.pending_instants() if p.action == "rollback"]
    assert t.timeline.is_rolled_back(i.requested_time)  # a pending rollback already counts
    with pytest.raises(InstantRolledBackError):
        t.commit(i, stats)
    cleaner = make_table()
    cleaner.rollback_failed_writes()
    assert cleaner.pending_instants() == []
    assert not t.storage.exists(stats[0].file_name)
    assert cleaner.timeline.get(pending_rb.requested_time).is_completed


def test_reads_of_some_file_groups_and_the_stored_row_count(make_table):
    """What a distributed reader needs: the file groups, each read on its own, and how
    many rows a full read would load (a MOR update is stored twice until compaction)."""
    table = make_table(TableConfig(table_type="mor", file_groups=3))
    first = table.start_instant()
    table.commit(first, table.write_files(first, rows(range(30))))
    second = table.start_instant()
    table.commit(second, table.write_files(second, rows([1, 2, 3], [7, 7, 7])))
    groups = table.file_ids()
    assert len(groups) == 3
    parts = [table.snapshot(file_ids=[g]) for g in groups]
    assert sum(p.num_rows for p in parts) == 30
    pieced = pa.concat_tables(parts).sort_by("id")
    assert pieced.equals(table.snapshot().sort_by("id"))
    assert pieced.filter(pa.compute.equal(pieced["id"], 1))["v"].to_pylist() == [7]
    assert table.stored_rows() == 33
    as_of_first = table.timeline.reload().completed()[0].completion_time
    assert sum(table.as_of(as_of_first, file_ids=[g]).num_rows for g in groups) == 30
    assert table.stored_rows(as_of_first) == 30


def test_a_read_may_name_a_meta_column_and_ask_for_meta(make_table):
    """Readers ask for `_hoodie_commit_time` among the columns and with_meta=True at once."""
    from engine.table.merge import COMMIT_TIME

    table = make_table()
    instant = table.start_instant()
    table.commit(instant, table.write_files(instant, rows(range(5))))
    read = table.snapshot(columns=["id", COMMIT_TIME], with_meta=True)
    assert read.num_rows == 5 and read.column_names.count(COMMIT_TIME) == 1


def test_a_read_may_leave_some_log_files_out(make_table):
    """Each key's version before the left-out logs (a judge's model of a reader that files
    them under another slice); the table's own reads keep them."""
    table = make_table(TableConfig(table_type="mor", file_groups=1))
    versions = [rows(range(5)), rows([1], [7]), rows([1, 50], [8, 8])]
    written = []
    for batch in versions:
        instant = table.start_instant()
        written.append(table.write_files(instant, batch))
        table.commit(instant, written[-1])
    last = frozenset(s.file_name for s in written[-1])
    assert as_dict(table.snapshot(leave_out=last)) == {**as_dict(rows(range(5))), 1: 7}
    done = table.timeline.reload().completed()[-1].completion_time
    assert as_dict(table.as_of(done, leave_out=last)) == {**as_dict(rows(range(5))), 1: 7}
    assert as_dict(table.snapshot())[1] == 8 and 50 in as_dict(table.snapshot())
