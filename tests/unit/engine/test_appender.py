"""BaseAppender (engine/table/appender.py): a COW insert's file written one row group per
flush. The file reads as any base file does (string meta columns, seqno numbered on);
until it closes no listing shows it; a writer that dies between flushes, a rollback of
the half-written file and a writer that outlives its instant leave nothing behind; with
markers off the unclosed file is still only a temp that parses as no data file."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.config import Safety, TableConfig
from engine.errors import CorruptFileError, EngineError, SchemaMismatchError
from engine.storage import TEMP_PREFIX, Storage
from engine.table import Table
from engine.table.markers import MARKER_DIR, MarkerError, marker_dir
from engine.table.merge import COMMIT_SEQNO, FILE_NAME, HOODIE_META
from tests.unit.engine.engine_helpers import as_dict, rows


def listed(table: Table) -> set[str]:
    """What a reader that lists the table folder sees: data files and temps."""
    names = table.storage.list("")
    return {f.name for f in table.data_files()} | {n for n in names if n.startswith(TEMP_PREFIX)}


def temps_anywhere(table: Table) -> list[str]:
    return [p for p in table.storage.walk("") if p.rsplit("/", 1)[-1].startswith(TEMP_PREFIX)]


def test_row_groups_make_one_base_file_that_reads_like_any_other(make_table):
    table = make_table(TableConfig(file_groups=2))
    instant = table.start_instant()
    appender = table.open_appender(instant, "0-0-0")
    assert appender.write(rows(range(0, 30))) == 30
    assert appender.write(rows(range(30, 50))) == 20
    stat = appender.close()
    assert stat is not None and (stat.num_rows, stat.num_inserts, stat.op) == (50, 50, "insert")
    table.commit(instant, [stat])
    assert as_dict(table.snapshot()) == {i: i * 10 for i in range(50)}

    data = table.storage.read_bytes(stat.file_name)
    assert stat.file_size == len(data)
    parquet = pq.ParquetFile(pa.BufferReader(data))
    assert parquet.metadata.num_row_groups == 2
    stored = parquet.read()
    # Written from dictionary arrays, the constant meta columns read back as strings, and
    # the file's schema is what write_files writes for the same rows.
    assert all(stored.schema.field(c).type == pa.string() for c in HOODIE_META)
    other = table.start_instant()
    [plain] = table.write_files(other, rows(range(50, 60)), op="insert")
    assert table.storage.read_parquet(plain.file_name).schema.equals(stored.schema)
    # The seqno numbers on across row groups: unique within the file, Hudi's form.
    seqnos = stored.column(COMMIT_SEQNO).to_pylist()
    assert seqnos == [f"{instant.requested_time}_0_{i}" for i in range(50)]
    assert set(stored.column(FILE_NAME).to_pylist()) == {stat.file_name}


def test_a_reader_never_sees_an_unclosed_file(make_table):
    table = make_table(TableConfig(file_groups=2))
    instant = table.start_instant()
    before = listed(table)
    appender = table.open_appender(instant, "0-0-0")
    appender.write(rows(range(10)))
    appender.write(rows(range(10, 20)))
    # Written so far, but only as a temp inside the instant's marker directory.
    assert listed(table) == before
    [temp] = temps_anywhere(table)
    assert temp.startswith(marker_dir(instant.requested_time) + "/")
    assert table.orphan_files() == []
    stat = appender.close()
    assert listed(table) == before | {stat.file_name}
    assert temps_anywhere(table) == []


def test_a_writer_that_died_between_flushes_leaves_nothing_after_the_commit(make_table):
    table = make_table(TableConfig(file_groups=2))
    instant = table.start_instant()
    dead = table.open_appender(instant, "0-0-0")
    dead.write(rows(range(20)))  # the attempt dies here: never closed, never reported
    retry = table.open_appender(instant, "0-0-1")
    retry.write(rows(range(20)))
    stat = retry.close()
    table.commit(instant, [stat])
    assert listed(table) == {stat.file_name}
    assert temps_anywhere(table) == []
    assert table.storage.list(MARKER_DIR) == []
    assert as_dict(table.snapshot()) == {i: i * 10 for i in range(20)}


def test_rollback_of_a_partly_written_file_deletes_it_and_its_close_fails(make_table):
    table = make_table(TableConfig(file_groups=2))
    instant = table.start_instant()
    appender = table.open_appender(instant, "0-0-0")
    appender.write(rows(range(20)))
    table.rollback(instant)
    assert temps_anywhere(table) == []
    with pytest.raises(FileNotFoundError):
        appender.close()  # the seal took its temp file: nothing lands
    assert listed(table) == set()
    assert temps_anywhere(table) == []
    with pytest.raises(MarkerError):  # and a new file of the instant is refused at once
        table.open_appender(instant, "0-0-1").write(rows(range(3)))


def test_a_writer_late_for_a_completed_instant_lands_nothing(make_table):
    table = make_table(TableConfig(file_groups=2))
    instant = table.start_instant()
    late = table.open_appender(instant, "1-0-0")
    late.write(rows(range(100, 110)))
    on_time = table.open_appender(instant, "0-0-0")
    on_time.write(rows(range(10)))
    stat = on_time.close()
    table.commit(instant, [stat])
    late.write(rows(range(110, 120)))  # still writing into the sealed-away temp
    with pytest.raises(FileNotFoundError):
        late.close()
    assert listed(table) == {stat.file_name}
    assert temps_anywhere(table) == []
    assert as_dict(table.snapshot()) == {i: i * 10 for i in range(10)}


def test_markers_off_the_unclosed_file_is_a_temp_no_listing_reads(make_table):
    table = make_table(TableConfig(file_groups=2), safety=Safety(markers=False))
    instant = table.start_instant()
    dead = table.open_appender(instant, "0-0-0")
    dead.write(rows(range(10)))
    [temp] = temps_anywhere(table)
    assert "/" not in temp  # in the table folder, beside the data files
    assert table.data_files() == []  # a temp parses as no data file
    retry = table.open_appender(instant, "0-0-1")
    retry.write(rows(range(10)))
    table.commit(instant, [retry.close()])
    assert as_dict(table.snapshot()) == {i: i * 10 for i in range(10)}


def test_an_empty_appender_writes_nothing_and_mor_tables_have_none(make_table):
    table = make_table(TableConfig(file_groups=2))
    instant = table.start_instant()
    appender = table.open_appender(instant, "0-0-0")
    assert appender.write(rows([])) == 0
    assert appender.close() is None
    assert table.markers.files(instant.requested_time) == []
    with pytest.raises(ValueError, match="write token"):
        table.open_appender(instant, "bad_token")


def test_an_appender_needs_a_cow_table(tmp_path):
    table = Table.create(str(tmp_path / "mor"), TableConfig(table_type="mor"), max_skew_ms=0)
    try:
        with pytest.raises(EngineError, match="copy-on-write"):
            table.open_appender(table.start_instant(), "0-0-0")
    finally:
        table.close()


def test_a_torn_close_is_refused_with_verify_writes(make_table):
    table = make_table(TableConfig(file_groups=2))
    instant = table.start_instant()
    appender = table.open_appender(instant, "0-0-0")
    appender.write(rows(range(10)))
    table.storage.after_write_hooks.append(
        lambda full: table.storage.raw_write(full, table.storage.raw_read(full)[:-9])
    )
    with pytest.raises(CorruptFileError, match="torn write"):
        appender.close()


def test_open_write_publishes_whole_at_close_and_refuses_once_sealed(storage_root):
    s = Storage(storage_root)
    s.makedirs("stage")
    s.create_dir("stage/i1")
    f = s.open_write("f.bin", "stage/i1")
    f.stream.write(b"abc")
    assert s.list("") == ["stage"]  # the unfinished file: in the staging folder (or memory)
    assert not s.exists("f.bin")
    assert f.close() == 3
    assert s.read_bytes("f.bin") == b"abc"
    g = s.open_write("g.bin", "stage/i1")
    g.stream.write(b"late")
    s.rename("stage/i1", "stage/sealed")  # how markers seal an instant's directory
    with pytest.raises(FileNotFoundError):
        g.close()
    assert not s.exists("g.bin")


def test_an_appended_file_on_either_backend_commits_and_a_rollback_drops_the_next(
    storage_root,
):
    table = Table.create(storage_root, TableConfig(file_groups=2), max_skew_ms=0)
    try:
        instant = table.start_instant()
        appender = table.open_appender(instant, "0-0-0")
        appender.write(rows(range(10)))
        appender.write(rows(range(10, 25)))
        assert table.data_files() == []  # nothing listed before the close
        table.commit(instant, [appender.close()])
        assert as_dict(table.snapshot()) == {i: i * 10 for i in range(25)}
        pending = table.start_instant()
        late = table.open_appender(pending, "0-0-0")
        late.write(rows(range(100, 105)))
        table.rollback(pending)
        with pytest.raises(FileNotFoundError):
            late.close()
        assert len(table.data_files()) == 1
        assert as_dict(table.snapshot()) == {i: i * 10 for i in range(25)}
    finally:
        table.close()


def test_later_row_groups_take_the_first_ones_schema(tmp_path):
    table = Table.create(str(tmp_path / "t"), TableConfig(file_groups=2), max_skew_ms=0)
    try:
        assert table.schema is None  # nothing declared, nothing committed yet
        appender = table.open_appender(table.start_instant(), "0-0-0")
        appender.write(rows(range(5)))
        narrower = pa.table({"id": pa.array([5, 6], pa.int32()), "v": pa.array([50, 60])})
        assert appender.write(narrower) == 2  # cast safely to the file's int64
        with pytest.raises(SchemaMismatchError, match="missing columns"):
            appender.write(pa.table({"id": [7]}))
        assert appender.close().num_rows == 7
    finally:
        table.close()
