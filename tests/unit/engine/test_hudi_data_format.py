"""Data files in Apache Hudi 1.x's format: the five meta columns, MOR logs in Hudi's
log-block format (Parquet data blocks, delete blocks), and hudi-rs reading what the
engine wrote."""

from __future__ import annotations

import struct

import hudi  # a dependency of the project: Hudi's own reader
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.config import TableConfig
from engine.errors import CorruptFileError
from engine.layout.file_names import parse_data_file
from engine.layout.log_format import (
    DELETE_BLOCK,
    INSTANT_TIME,
    MAGIC,
    ORDERING_LONG,
    PARQUET_DATA_BLOCK,
    SCHEMA,
    decode_delete_keys,
    encode_block,
    encode_delete_content,
    read_blocks,
)
from engine.table import Table
from engine.table.data_files import decode_log, parquet_bytes
from engine.table.merge import HOODIE_META

SCHEMA_ = pa.schema([("id", pa.int64()), ("v", pa.int64()), ("ts", pa.int64())])


def _table(tmp_path, table_type: str, ordering: str | None = None) -> Table:
    config = TableConfig(table_type=table_type, file_groups=2, ordering_field=ordering)
    return Table.create(str(tmp_path / "t"), config, SCHEMA_, max_skew_ms=0, heartbeat_interval_s=0)


def _write(t: Table, ids: list[int], v: int, op: str = "upsert") -> str:
    with t.transaction() as tx:
        batch = {"id": ids, "v": [v] * len(ids), "ts": [v] * len(ids)}
        tx.write(pa.table(batch, schema=SCHEMA_), op=op)
        return tx.instant.requested_time


def _file_rows(t: Table, name: str) -> pa.Table | None:
    """A data file's stored rows (base: the Parquet file; log: its Parquet data block);
    None for a log holding a delete block."""
    data = t.storage.read_bytes(name)
    if parse_data_file(name).kind == "base":
        return pq.read_table(pa.BufferReader(data))
    (block,) = list(read_blocks(data))
    if block.block_type == DELETE_BLOCK:
        return None
    assert block.block_type == PARQUET_DATA_BLOCK
    return pq.read_table(pa.BufferReader(block.content))


# -- log blocks ---------------------------------------------------------------------------


def test_block_layout_is_hudis():
    """Magic, block length (everything after it), version 1, type, header, content
    length, content, footer, and the reverse pointer (length up to itself), big-endian."""
    content = b"parquet bytes"
    block = encode_block(PARQUET_DATA_BLOCK, {INSTANT_TIME: "20260101000000000"}, content)
    assert block.startswith(MAGIC)
    (length,) = struct.unpack_from(">q", block, 6)
    assert length == len(block) - 6 - 8
    assert struct.unpack_from(">ii", block, 14) == (1, PARQUET_DATA_BLOCK)
    # header: 1 entry, key 0, 17 bytes of value
    assert struct.unpack_from(">iii", block, 22) == (1, INSTANT_TIME, 17)
    assert block[34:51] == b"20260101000000000"
    assert struct.unpack_from(">q", block, 51) == (len(content),)
    assert block[59 : 59 + len(content)] == content
    assert struct.unpack_from(">i", block, 59 + len(content)) == (0,)  # empty footer
    assert struct.unpack_from(">q", block, len(block) - 8) == (len(block) - 8,)


def test_blocks_round_trip_and_delete_keys():
    header = {INSTANT_TIME: "20260101000000001", SCHEMA: '{"type":"record"}'}
    data = pa.table({"id": [1, 2]})
    keys = ["1", "22", "ключ"]
    raw = encode_block(PARQUET_DATA_BLOCK, header, parquet_bytes(data)) + encode_block(
        DELETE_BLOCK, header, encode_delete_content(keys, (ORDERING_LONG, 0))
    )
    first, second = read_blocks(raw)
    assert first.header == header and second.header == header
    assert pq.read_table(pa.BufferReader(first.content)).equals(data)
    assert second.block_type == DELETE_BLOCK
    assert decode_delete_keys(second.content) == keys
    assert decode_delete_keys(encode_delete_content([], (ORDERING_LONG, 0))) == []


@pytest.mark.parametrize("cut", [1, 10, 40, -9, -1])
def test_torn_last_block_is_ignored_as_a_partial_write(cut):
    """A crash mid-append leaves a partial block at the end: Hudi's reader treats it as
    corrupt and skips it; the whole blocks before it are read."""
    header = {INSTANT_TIME: "20260101000000002"}
    whole = encode_block(DELETE_BLOCK, header, encode_delete_content(["1"], (ORDERING_LONG, 0)))
    torn = encode_block(DELETE_BLOCK, header, encode_delete_content(["2"], (ORDERING_LONG, 0)))
    torn = torn[:cut]  # a prefix (cut > 0) or all but the last bytes (cut < 0)
    blocks = list(read_blocks(whole + torn))
    assert [decode_delete_keys(b.content) for b in blocks] == [["1"]]


def test_corrupt_block_in_the_middle_is_skipped_to_the_next_magic():
    header = {INSTANT_TIME: "20260101000000003"}
    one, two = (
        encode_block(DELETE_BLOCK, header, encode_delete_content([k], (ORDERING_LONG, 0)))
        for k in ("a", "b")
    )
    broken = bytearray(one)
    broken[-1] ^= 0xFF  # its reverse pointer no longer matches its length
    blocks = list(read_blocks(bytes(broken) + two))
    assert [decode_delete_keys(b.content) for b in blocks] == [["b"]]


def test_torn_log_file_decodes_to_no_rows_and_garbage_is_corrupt():
    block = encode_block(
        PARQUET_DATA_BLOCK,
        {INSTANT_TIME: "20260101000000004"},
        parquet_bytes(pa.table({"id": [1]})),
    )
    rows = decode_log(block[: len(block) // 2], "x", "id", pa.int64())
    assert rows.num_rows == 0 and "id" in rows.column_names
    with pytest.raises(CorruptFileError):
        decode_log(b"PAR1 not a log", "x", "id", pa.int64())
    bogus = bytearray(block)
    bogus[22:26] = struct.pack(">i", 1 << 20)  # a whole block whose header count lies
    with pytest.raises(CorruptFileError):
        decode_log(bytes(bogus), "x", "id", pa.int64())


# -- meta columns ---------------------------------------------------------------------------


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_every_stored_row_has_hudis_meta_columns(tmp_path, table_type):
    t = _table(tmp_path, table_type)
    first = _write(t, [1, 2, 3], 1)
    second = _write(t, [2, 4], 2)
    _write(t, [3], 0, op="delete")
    seen = 0
    for f in t.data_files():  # every version, superseded ones too
        name, rows = f.name, _file_rows(t, f.name)
        if rows is None:
            continue
        assert rows.column_names[:5] == list(HOODIE_META)
        assert "_hoodie_is_deleted" not in rows.column_names
        for c in HOODIE_META:
            assert rows.column(c).type == pa.string() and rows.column(c).null_count == 0
        by_key = {r["id"]: r for r in rows.to_pylist()}
        for k, r in by_key.items():
            written = second if k in (2, 4) and f.instant >= second else first
            assert r["_hoodie_commit_time"] == written
            assert r["_hoodie_commit_seqno"].startswith(f"{written}_0_")
            assert r["_hoodie_record_key"] == str(k)
            assert r["_hoodie_partition_path"] == ""
            assert r["_hoodie_file_name"] == name  # carried-over rows name their new file
        seen += rows.num_rows
    assert seen > 0
    meta = t.snapshot(with_meta=True).sort_by("id").to_pydict()
    assert meta["id"] == [1, 2, 4] and meta["_hoodie_is_deleted"] == [False] * 3


def test_mor_delete_is_a_delete_block_and_compaction_keeps_commit_times(tmp_path):
    t = _table(tmp_path, "mor")
    first = _write(t, [1, 2, 3], 1)
    deleting = _write(t, [2], 0, op="delete")
    logs = [f for f in t.data_files() if f.instant == deleting]
    (block,) = list(read_blocks(t.storage.read_bytes(logs[0].name)))
    assert block.block_type == DELETE_BLOCK and block.instant == deleting
    assert decode_delete_keys(block.content) == ["2"] and SCHEMA in block.header
    assert t.incremental(None, include_deletes=True).sort_by("id").to_pydict()[
        "_hoodie_is_deleted"
    ] == [False, True, False]
    compaction = t.schedule_compaction()
    t.run_compaction(compaction)
    bases = [f for f in t.data_files() if f.kind == "base"]
    assert bases
    for f in bases:
        rows = _file_rows(t, f.name)
        assert set(rows.column("_hoodie_commit_time").to_pylist()) <= {first}
        assert set(rows.column("_hoodie_file_name").to_pylist()) <= {f.name}
        assert 2 not in rows.column("id").to_pylist()
    assert t.stored_rows() == 2


# -- Hudi's reader ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("table_type", "ordering", "compact"),
    [("cow", None, False), ("mor", None, False), ("mor", "ts", False), ("mor", "ts", True)],
)
def test_hudi_rs_reads_what_the_engine_wrote(tmp_path, table_type, ordering, compact):
    t = _table(tmp_path, table_type, ordering)
    _write(t, list(range(10)), 1)
    _write(t, [1, 2, 3], 2)
    _write(t, [4], 0, op="delete")
    if compact:
        t.run_compaction(t.schedule_compaction())
    _write(t, [5, 6], 3)
    _write(t, [7], 0, op="delete")
    engine = t.snapshot(with_meta=True).drop_columns(["_hoodie_is_deleted"])
    reader = hudi.HudiTableBuilder.from_base_uri(t.path).build()
    theirs = pa.Table.from_batches(reader.read(hudi.HudiReadOptions()))
    columns = [*HOODIE_META, *SCHEMA_.names]
    rows = [t_.select(columns).sort_by("id").to_pylist() for t_ in (theirs, engine)]
    assert rows[0] == rows[1]
    assert theirs.column("id").to_pylist() != [] and 4 not in theirs.column("id").to_pylist()
