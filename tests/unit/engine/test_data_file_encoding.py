"""What a data file's Parquet encoding keeps: statistics where a reader may prune by them."""

import pyarrow as pa
import pyarrow.parquet as pq

from engine.layout.log_format import INSTANT_TIME, PARQUET_DATA_BLOCK, encode_block, read_blocks
from engine.table.data_files import data_log_bytes, parquet_bytes
from engine.table.merge import COMMIT_TIME, RECORD_KEY, add_meta


def test_statistics_on_data_columns_and_commit_time_not_on_bytes_or_unique_meta():
    rows = pa.table({"id": [1, 2, 3], "payload": [b"a", b"b", b"c"], "name": ["x", "y", "z"]})
    table = add_meta(rows, "id", "20260101000000000", 0, "f.parquet")
    meta = pq.ParquetFile(pa.BufferReader(parquet_bytes(table))).metadata.row_group(0)
    stats = {
        meta.column(i).path_in_schema: meta.column(i).is_stats_set for i in range(meta.num_columns)
    }
    assert stats["id"] and stats["name"] and stats[COMMIT_TIME]
    assert not stats["payload"] and not stats[RECORD_KEY]


def test_record_key_stored_uncompressed_every_other_column_snappy():
    """The record key's digits are not worth snappy's time; a nested column keeps the
    whole file on snappy (per-column codecs go by leaf path)."""
    rows = pa.table({"id": [1, 2, 3], "name": ["x", "y", "z"]})
    table = add_meta(rows, "id", "20260101000000000", 0, "f.parquet")
    meta = pq.ParquetFile(pa.BufferReader(parquet_bytes(table))).metadata.row_group(0)
    codecs = {meta.column(i).path_in_schema: meta.column(i).compression for i in range(7)}
    assert codecs.pop(RECORD_KEY) == "UNCOMPRESSED"
    assert set(codecs.values()) == {"SNAPPY"}, codecs
    nested = add_meta(rows.append_column("tags", pa.array([["a"], [], ["b"]])), "id", "1", 0, "f")
    meta = pq.ParquetFile(pa.BufferReader(parquet_bytes(nested))).metadata.row_group(0)
    assert {meta.column(i).compression for i in range(meta.num_columns)} == {"SNAPPY"}


def test_a_log_block_is_the_plain_encoding_byte_for_byte():
    """Its constant meta columns reach the encoder as dictionary arrays; the bytes are the
    same, and the rows read back as strings."""
    rows = pa.table({"id": [3, 1, 2], "name": ["x", "y", "z"]})
    table = add_meta(rows, "id", "20260101000000000", 2, ".fg-0001_20260101000000000.log.3_0-0-1")
    header = {INSTANT_TIME: "20260101000000000"}
    block = data_log_bytes(table, header)
    assert block == encode_block(PARQUET_DATA_BLOCK, header, parquet_bytes(table))
    (read,) = read_blocks(block)
    assert pq.read_table(pa.BufferReader(read.content)).equals(table)
