"""hudi_reader end to end: tables the engine wrote (no Spark), read by hudi-rs and by the
engine; the semantic difference on the real reader; a stray file and an unopenable table."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.config import TableConfig
from engine.table import Table, cleaning
from engine.table.merge import COMMIT_TIME
from harness.checks.hudi_rs import (
    EngineReads,
    HudiReads,
    check_table,
    compared_columns,
    completed_instants,
    misfiled_keys,
)
from harness.checks.result import CheckResult
from harness.runner.final_state import retention_of


def judged(table: Table, retain_commits: int = 0) -> CheckResult:
    """hudi_reader with the cleaner's window recomputed as the run's checks do, under the
    retention the test's cleans were given."""
    window = retention_of(table, retain_commits)
    return check_table(table, window.start, window.deletable)


def engine_rows(ids, values) -> pa.Table:
    return pa.table(
        {"id": pa.array(list(ids), pa.int64()), "v": pa.array(list(values), pa.int64())}
    )


@dataclass
class Written:
    table: Table
    early: str  # requested first, completed after `straddled` completed
    straddled: str  # a completion time the early instant straddles
    # mor: (requested, completed) of a log write that completed while a compaction of its
    # file group was pending, and the compaction's requested time
    across: tuple[str, str] | None = None
    compaction: str | None = None


def two_writers(path: Path, table_type: str, file_groups: int) -> tuple[Table, Table]:
    """A new table (writer w1) and a second writer of it (w2), no skew or heartbeats."""
    config = TableConfig(table_type=table_type, file_groups=file_groups)
    opts = {"max_skew_ms": 0, "heartbeat_interval_s": 0, "heartbeat_expiry_s": 30}
    table = Table.create(str(path), config, writer_id="w1", **opts)
    return table, Table.open(str(path), writer_id="w2", **opts)


def write_table(path: Path, table_type: str) -> Written:
    """Inserts, upserts and deletes; one instant inflight across another's completion; on
    MOR a compaction with a log write inflight across its scheduling."""
    table, other = two_writers(path, table_type, file_groups=2)
    with table.transaction() as tx:
        tx.write(engine_rows(range(10), range(0, 100, 10)))
    early = other.start_instant()
    early_stats = other.write_files(early, engine_rows([100], [1000]))
    with table.transaction() as tx:  # keys 1 and 7 live in the other file group than 100
        tx.write(engine_rows([1, 7], [11, 71]))
    straddled = tx.completion_time
    other.commit(early, early_stats)
    with table.transaction() as tx:
        tx.write(engine_rows([3], [0]), op="delete")
    written = Written(table, early.requested_time, straddled)
    if table_type == "mor":
        inflight = other.start_instant()
        stats = other.write_files(inflight, engine_rows([4, 101], [41, 1010]))
        compaction = table.schedule_compaction()
        done = other.commit(inflight, stats)
        table.run_compaction(compaction)
        written.across = (inflight.requested_time, done)
        written.compaction = compaction.requested_time
    with table.transaction() as tx:
        tx.write(engine_rows([5, 102], [51, 1020]))
    other.close()
    return written


@pytest.fixture(params=["cow", "mor"])
def written(request, tmp_path):
    w = write_table(tmp_path / "t", request.param)
    yield w
    w.table.close()


def test_hudi_rs_agrees_with_the_engine_on_its_tables(written):
    r = judged(written.table)
    assert r.verdict == "valid", r.evidence
    assert r.evidence["time_travel"]["compared"] >= 4
    skipped = r.evidence["time_travel"]["skipped"]["items"]
    straddled = [x for x in skipped if x["as_of"] == written.straddled]
    assert straddled[0]["requested_earlier_completed_later"] == [written.early]
    assert r.evidence["incremental"]["compared"] >= 4
    pulls_skipped = r.evidence["incremental"]["skipped"]["items"]
    if written.across:
        log = {"instant": written.across[0], "slice_opened_by": [written.compaction]}
        assert pulls_skipped == [log]
    else:
        assert pulls_skipped == []


def test_hudi_rs_time_travel_is_by_requested_time_and_pulls_by_completion_time(written):
    """The difference the check steps around, on the real reader: at a completion time that
    an earlier-requested instant straddles, hudi-rs's time travel already shows that
    instant's row (by requested time), the engine's as-of read does not (by completion
    time). Incremental pulls agree: both select by completion time."""
    columns = compared_columns(written.table.schema, "id")
    hudi = HudiReads(written.table.storage.root, columns)
    engine = EngineReads(written.table, columns)
    c = written.straddled
    assert 100 in hudi.as_of(c).column("id").to_pylist()
    assert 100 not in engine.as_of(c).column("id").to_pylist()
    for reader in (hudi, engine):
        assert 100 not in reader.incremental(None, c).column("id").to_pylist()
        assert 100 in reader.incremental(c, None).column("id").to_pylist()
    if written.across:
        # A log write completed while a compaction of its group was pending: hudi-rs's pull
        # up to its completion misses it, and the pull after it does not bring it back
        # (the engine returns it in the first).
        done = written.across[1]
        assert 101 in engine.incremental(None, done).column("id").to_pylist()
        assert 101 not in hudi.incremental(None, done).column("id").to_pylist()
        assert 101 not in hudi.incremental(done, None).column("id").to_pylist()
        assert 101 in hudi.incremental(None, None).column("id").to_pylist()  # once compacted


def test_a_stray_file_hudi_rs_lists_makes_the_check_invalid(written):
    """A data file of a committed instant that its commit metadata does not list (what
    markers delete before an instant completes): the engine never reads it, hudi-rs lists
    storage and does: the check names the rows."""
    table = written.table
    instants = table.timeline.reload().completed()
    base = next(f for i in instants[::-1] for f in table.catalog.files_of(i) if f.kind == "base")
    stray = base.name.replace(base.file_id, "stray-group", 1)
    root = Path(table.storage.root)
    data = pq.read_table(root / base.name)
    pq.write_table(data, root / stray)
    r = judged(table)
    assert r.verdict == "invalid", r.evidence
    snapshot = r.evidence["disagreements"]["items"][0]
    assert snapshot["read"] == "snapshot"
    assert snapshot.get("duplicated_in_hudi") or snapshot.get("error"), snapshot


def test_a_table_hudi_rs_cannot_open_is_invalid_once_it_claims_hudi(tmp_path):
    w = write_table(tmp_path / "t", "cow")
    props = Path(w.table.storage.root) / ".hoodie" / "hoodie.properties"
    text = props.read_text()
    props.write_text(text.replace("hoodie.table.type=", "hoodie.table.type=NOT_A_TYPE_"))
    r = judged(w.table)
    assert r.verdict == "invalid" and "open_error" in r.evidence, r.evidence
    props.write_text("{}")  # no table version: not a Hudi table at all
    r = judged(w.table)
    assert r.verdict == "unknown" and "not a Hudi table" in r.evidence["reason"], r.evidence
    w.table.close()


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_archived_and_cleaned_tables_compare_inside_the_retention_window(tmp_path, table_type):
    """hudi-rs pulls see the active timeline only, and a clean deletes the files of reads
    before its boundary: those pulls and points are skipped, everything else agrees."""
    config = TableConfig(table_type=table_type, file_groups=2)
    table = Table.create(str(tmp_path / "t"), config, max_skew_ms=0, heartbeat_interval_s=0)
    for n in range(8):
        with table.transaction() as tx:
            tx.write(engine_rows([n % 3, n + 100], [n, n]))
        if table_type == "mor" and n in (3, 6):
            table.run_compaction(table.schedule_compaction())
    assert cleaning.clean(table, retain_commits=2) is not None
    assert table.archive(keep=3) > 0
    r = judged(table, retain_commits=2)
    table.close()
    assert r.verdict == "valid", r.evidence
    pulls = r.evidence["incremental"]["skipped"]["items"]
    assert any(p.get("archived") for p in pulls), pulls
    points = r.evidence["time_travel"]["skipped"]["items"]
    assert any(p.get("out_of_window") for p in points)
    assert r.evidence["time_travel"]["compared"] >= 2 and r.evidence["incremental"]["compared"] >= 1


def test_archival_counts_commits_so_cleans_never_empty_the_active_timeline(tmp_path):
    """The table services clean after every commit, so the newest instants are cleans.
    Archival keeps `keep` commits, as Hudi's archiver does, not `keep` instants of any
    action: counting the cleans moved every commit off the active timeline, and hudi-rs,
    which reads the active timeline only, read an empty table (the nightly locks suite's
    coordinator-crash-storage-s3)."""
    config = TableConfig(table_type="cow", file_groups=2)
    table = Table.create(str(tmp_path / "t"), config, max_skew_ms=0, heartbeat_interval_s=0)
    cleans = 0
    for n in range(6):
        with table.transaction() as tx:
            tx.write(engine_rows([n, n + 100], [n, n]))
        cleans += cleaning.clean(table, retain_commits=1) is not None
    assert cleans >= 4 and table.timeline.completed()[-1].action == "clean"
    assert table.archive(keep=2) > 0
    active = table.timeline.completed()
    assert [i.action for i in active].count("commit") == 2, active
    r = judged(table, retain_commits=1)
    table.close()
    assert r.verdict == "valid", r.evidence
    assert r.evidence["snapshot_rows"] == 12


def test_archival_moves_a_prefix_in_requested_order(tmp_path):
    """An instant requested before others and completed after them (a stream instant a
    restarted coordinator recommits while a batch writer commits) stays on the active
    timeline; so do the instants requested after it. A reader that takes the files of
    instants requested before the active timeline's first as committed (hudi-rs, Java
    Hudi) otherwise drops the files of the later-requested instants archived before it:
    hudi_reader in the coordinator crash on S3 with a batch writer (2,178 keys)."""
    table, other = two_writers(tmp_path / "t", "cow", file_groups=4)
    with table.transaction() as tx:
        tx.write(engine_rows([0], [0]))
    straddler = other.start_instant()
    stats = other.write_files(straddler, engine_rows([1], [1]))
    for key in (2, 4, 5, 8):  # one file group, not the straddler's (key 1's); requested
        with table.transaction() as tx:  # after the straddler, completed before it
            tx.write(engine_rows([key], [key]))
    other.commit(straddler, stats)
    with table.transaction() as tx:
        tx.write(engine_rows([6], [6]))
    table.archive(keep=2)
    active = {i.requested_time for i in table.timeline.completed()}
    assert straddler.requested_time in active
    archived = [i.requested_time for i in table.timeline.archive.instants()]
    assert all(t < min(active) for t in archived), (archived, active)
    r = judged(table)
    table.close()
    other.close()
    assert r.verdict == "valid", r.evidence
    assert r.evidence["snapshot_rows"] == 7


def test_a_key_two_writers_wrote_in_crossed_order_reads_the_same_in_both(tmp_path):
    """Two writers append the same key to one file group's logs, requested A < B and
    completed B < A: the engine keeps B's row (requested last), as hudi-rs and Java Hudi
    do; every key is compared, and a real difference elsewhere stays invalid."""
    table, other = two_writers(tmp_path / "t", "mor", file_groups=1)
    with table.transaction() as tx:
        tx.write(engine_rows([0], [0]))
    table.run_compaction(table.schedule_compaction())  # key 0 in a base file
    a = table.start_instant()
    a_stats = table.write_files(a, engine_rows([1, 2], [10, 20]))
    b = other.start_instant()
    b_stats = other.write_files(b, engine_rows([1, 3], [11, 31]))
    other.commit(b, b_stats)
    table.commit(a, a_stats)
    other.close()
    columns = compared_columns(table.schema, "id")
    hudi = HudiReads(table.storage.root, columns).snapshot().drop_columns([COMMIT_TIME])
    engine = EngineReads(table, columns).snapshot().drop_columns([COMMIT_TIME])
    assert {"id": 1, "v": 11} in hudi.to_pylist() and {"id": 1, "v": 11} in engine.to_pylist()

    r = judged(table)
    assert r.verdict == "valid", r.evidence
    assert r.evidence["rows"]["left_out"] == 0

    base = next(f for f in table.data_files() if f.kind == "base")
    root = Path(table.storage.root)
    pq.write_table(pq.read_table(root / base.name), root / base.name.replace("fg-0000", "stray"))
    r = judged(table)
    table.close()
    assert r.verdict == "invalid", r.evidence
    snapshot = r.evidence["disagreements"]["items"][0]
    assert snapshot["read"] == "snapshot" and snapshot["duplicated_in_hudi"]["keys"] == [0]


def test_a_crossed_pair_whose_files_were_cleaned_is_judged_inside_the_window(tmp_path):
    """Two writers' logs crossed (requested A < B, completed B < A) in a slice that later
    compactions superseded and the cleaner deleted: the reads inside the window compare."""
    table, other = two_writers(tmp_path / "t", "mor", file_groups=1)
    a = table.start_instant()
    a_stats = table.write_files(a, engine_rows([1, 2], [10, 20]))
    b = other.start_instant()
    other.commit(b, other.write_files(b, engine_rows([1, 3], [11, 31])))
    table.commit(a, a_stats)
    other.close()
    for n in range(3):
        table.run_compaction(table.schedule_compaction())
        with table.transaction() as tx:
            tx.write(engine_rows([1, 4], [100 + n, 40 + n]))
    assert cleaning.clean(table, retain_commits=1) is not None
    gone = [s.file_name for s in a_stats if not table.storage.exists(s.file_name)]
    assert gone  # A's log was cleaned
    table.close()
    fresh = Table.open(str(tmp_path / "t"))  # as the runner opens it: nothing cached
    r = judged(fresh, retain_commits=1)
    fresh.close()
    assert r.verdict == "valid", r.evidence


def _archived_log_across_a_compaction(tmp_path, keys):
    """A table of `keys` keys in one group; a log write (keys 100 and 3) that completed
    while a compaction of the group was pending, archived with it."""
    table, other = two_writers(tmp_path / "t", "mor", file_groups=1)
    with table.transaction() as tx:
        tx.write(engine_rows(range(keys), range(keys)))
    log = other.start_instant()
    stats = other.write_files(log, engine_rows([100, 3], [1000, 33]))
    compaction = table.schedule_compaction()
    other.commit(log, stats)  # completes while the compaction is pending
    table.run_compaction(compaction)
    with table.transaction() as tx:
        tx.write(engine_rows([5], [55]))
    assert table.archive(keep=1) == 3  # the log write and the compaction among them
    return table, other, log, compaction


def test_a_read_that_leaves_more_than_a_tenth_of_its_rows_out_is_unknown(tmp_path):
    """The archived log write below in a table of 10 keys: its 2 keys are 2 of 11 rows of
    the snapshot, past the bound, so the agreement on the other 9 is not `valid`."""
    table, other, _, _ = _archived_log_across_a_compaction(tmp_path, keys=10)
    r = judged(table)
    other.close()
    table.close()
    assert r.verdict == "unknown", r.evidence
    over = r.evidence["rows"]["reads_over_bound"]["items"]
    assert {"read": "snapshot", "rows": 11, "left_out": 2} in over


def test_an_archived_log_write_is_left_out_where_hudi_rs_files_it_by_requested_time(tmp_path):
    """The services suite's mor pause run: a log write completed while a compaction of its
    group was pending, and was archived while its log was still in the compaction's slice.
    hudi-rs reads the active timeline only: without the completion time it files the log
    before the compaction and reads that slice without it (it misses an insert and shows
    an update's older value). Those keys are left out of the snapshot and of the points
    reading that slice, and named; once a later compaction holds the rows in its base,
    hudi-rs reads them again and the snapshot compares them."""
    table, other, log, compaction = _archived_log_across_a_compaction(tmp_path, keys=40)
    columns = compared_columns(table.schema, "id")
    hudi = HudiReads(table.storage.root, columns)
    assert 100 not in hudi.snapshot().column("id").to_pylist()  # the reader difference
    assert 100 in EngineReads(table, columns).snapshot().column("id").to_pylist()

    r = judged(table)
    assert r.verdict == "valid", r.evidence["disagreements"]
    archived = r.evidence["archived_logs"]
    [item] = archived["skipped"]["items"]
    assert item["instant"] == log.requested_time
    assert item["compactions_requested_while_inflight"] == [compaction.requested_time]
    assert item["keys"] == {"count": 2, "keys": [3, 100]}
    assert archived["reads_excluding_keys"] >= 1  # the snapshot at least
    [misfiled] = misfiled_keys(table, completed_instants(table), frozenset())  # no clean
    assert misfiled.in_view(None, None)

    table.run_compaction(table.schedule_compaction())  # requested after the log completed
    assert 100 in HudiReads(table.storage.root, columns).snapshot().column("id").to_pylist()
    [misfiled] = misfiled_keys(table, completed_instants(table), frozenset())  # no clean
    assert not misfiled.in_view(None, None)  # the snapshot compares them again
    r = judged(table)
    assert r.verdict == "valid", r.evidence["disagreements"]
    other.close()
    table.close()
