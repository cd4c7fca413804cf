"""The bytes of data files: Parquet base files and Hudi log files, written and read back.

A log file holds one block (engine/layout/log_format.py): a Parquet data block of new
versions, or a delete block of record keys. Decoded for the engine's merges, a delete
block becomes delete markers: rows with the meta columns, the typed key and
`_hoodie_is_deleted` true (other columns null).
"""

from __future__ import annotations

import base64
import struct
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from engine.errors import CorruptFileError
from engine.layout.avro_data_block import avro_block_rows, decode_avro_block
from engine.layout.file_names import LOG, parse_data_file
from engine.layout.log_format import (
    AVRO_DATA_BLOCK,
    DELETE_BLOCK,
    INSTANT_TIME,
    ORDERING_INT,
    ORDERING_LONG,
    ORDERING_STRING,
    PARQUET_DATA_BLOCK,
    SCHEMA,
    LogFormatError,
    decode_delete_keys,
    encode_block,
    encode_delete_content,
    read_blocks,
)
from engine.storage import Encoder, Storage
from engine.table.merge import (
    COMMIT_SEQNO,
    COMMIT_TIME,
    FILE_NAME,
    HOODIE_META,
    IS_DELETED,
    META_FIELDS,
    PARTITION_PATH,
    RECORD_KEY,
    concat,
    dictionary_constants,
    record_keys,
)

# What a log file's bytes can raise when they are not what their blocks claim (fastavro
# raises ValueError, EOFError and others on bad Avro).
_UNREADABLE = (
    pa.ArrowInvalid,
    OSError,
    IndexError,
    UnicodeError,
    struct.error,
    ValueError,
    EOFError,
)

# Unique per row: no dictionary. Statistics only where a reader may prune by them (the
# data columns, the commit time). PLAIN rather than DELTA_BYTE_ARRAY for the unique
# columns: 20% cheaper to write, at 1.7x the bytes of those columns.
_UNIQUE = (COMMIT_SEQNO, RECORD_KEY)
_NO_STATS = (COMMIT_SEQNO, RECORD_KEY, PARTITION_PATH, FILE_NAME)
# A column chunk falls back from dictionary to PLAIN once its dictionary passes this size.
# pyarrow's 1 MiB lets a unique data column (a key, a timestamp, random payloads) build a
# whole useless dictionary first: 64 KiB wrote 50,000 rows 30-40% faster with smaller
# files. 8 KiB (1,024 int64s, a few hundred short strings) still keeps low-cardinality
# columns dictionary-encoded, and a small file (an early flush of 5,000 rows, whose unique
# columns never reached 64 KiB) no longer hashes every value: ten 5,000-row files of 64 B
# events 14.3 -> 11.1 ms, one 50,000-row file 9.4 -> 8.2 (minimum of 12, interleaved).
_DICTIONARY_LIMIT = 8 * 1024
_ARROW_SCHEMA = "ARROW:schema"  # the footer key pyarrow restores Arrow types from


def _has_stats(field: pa.Field) -> bool:
    """Min/max where a reader may prune by them: not the unique or constant meta columns,
    not opaque bytes (a binary column's min and max are whole values: 1 KB payloads cost
    2.5 ms per 50,000 rows in statistics, 64 B payloads 1 ms, for bounds nobody filters by)."""
    binary = pa.types.is_binary(field.type) or pa.types.is_large_binary(field.type)
    return field.name not in _NO_STATS and not binary


def _options(schema: pa.Schema) -> dict[str, Any]:
    return {
        "compression": _compression(schema),
        "use_dictionary": [c for c in schema.names if c not in _UNIQUE],
        "write_statistics": [f.name for f in schema if _has_stats(f)],
        "dictionary_pagesize_limit": _DICTIONARY_LIMIT,
    }


def _compression(schema: pa.Schema) -> str | dict[str, str]:
    """Snappy, but the record key uncompressed: snappy took two thirds of its encoding
    time to save a third of its bytes (a key's digits: 6,250 keys 0.17 -> 0.06 ms, 37 ->
    61 KB; the MOR 50,000-row upsert's CPU about 1 ms, 5%, less). The seqno keeps snappy
    (its instant prefix, shared by every row, shrinks it 5x). Per column by name: a nested
    column's leaves have other paths (and would go uncompressed), so then snappy for all."""
    if RECORD_KEY not in schema.names or any(pa.types.is_nested(f.type) for f in schema):
        return "snappy"
    return {c: "none" if c == RECORD_KEY else "snappy" for c in schema.names}


def write_parquet(table: pa.Table, out: pa.NativeFile) -> None:
    """A data file's rows as Parquet into `out`: a base file, or a Parquet log block's
    content."""
    pq.write_table(table, out, **_options(table.schema))


def parquet_writer(schema: pa.Schema, out: pa.NativeFile) -> pq.ParquetWriter:
    """A base file written row group by row group (engine/table/appender.py), encoded as
    write_parquet encodes. Meta columns may come as dictionary arrays (add_meta's
    `dictionary`: one value per file, so the writer need not hash 50,000 equal strings,
    1 ms per 50,000 rows): they are stored as strings, and the footer's Arrow schema is
    the plain one, added here as pyarrow adds it (the file is byte for byte what
    write_parquet makes of string columns), so every reader sees string columns."""
    plain = pa.schema(
        [
            f.with_type(f.type.value_type)
            if f.name in HOODIE_META and pa.types.is_dictionary(f.type)
            else f
            for f in schema
        ],
        metadata=schema.metadata,
    )
    if plain.equals(schema):
        return pq.ParquetWriter(out, schema, **_options(schema))
    writer = pq.ParquetWriter(out, schema, store_schema=False, **_options(plain))
    stored = {k.decode(): v.decode() for k, v in (schema.metadata or {}).items()}
    stored[_ARROW_SCHEMA] = base64.b64encode(plain.serialize().to_pybytes()).decode()
    writer.add_key_value_metadata(stored)
    return writer


def parquet_encoder(table: pa.Table) -> Encoder:
    """A base file for Storage.write_verified, encoded straight into its temp file: no
    buffer grown to the file's size and copied out (50,000 rows, encode + write, minimum
    of 15: 1 KB payloads 44 -> 30 ms, 256 B 17 -> 15, 64 B 11.2 -> 9.8)."""
    return lambda out: write_parquet(table, out)


def parquet_bytes(table: pa.Table) -> pa.Buffer:
    """The Parquet file in memory (a log block's content: its length precedes it). The
    encoder's own buffer (no copy into a bytes object): storage writes it as it is."""
    sink = pa.BufferOutputStream()
    write_parquet(table, sink)
    return sink.getvalue()


def is_log(name: str) -> bool:
    parsed = parse_data_file(name)
    return parsed is not None and parsed.kind == LOG


def log_header(instant: str, avro_schema: str | None) -> dict[int, str]:
    """INSTANT_TIME and SCHEMA (the writer's Avro schema with the meta fields), as Hudi's
    append handle heads both its data and its delete blocks."""
    return {INSTANT_TIME: instant, **({SCHEMA: avro_schema} if avro_schema else {})}


def data_log_bytes(rows: pa.Table, header: dict[int, str]) -> bytes:
    """A Parquet data block of a new version's rows (add_meta's). Its constant meta columns
    reach the encoder as dictionary arrays: the same bytes as parquet_bytes(rows), 0.05 ms
    less per 6,250 rows (0.97 -> 0.92 ms)."""
    table = dictionary_constants(rows)
    sink = pa.BufferOutputStream()
    with parquet_writer(table.schema, sink) as writer:
        writer.write_table(table)
    return encode_block(PARQUET_DATA_BLOCK, header, memoryview(sink.getvalue()))


def delete_ordering(schema: pa.Schema | None, field: str | None) -> tuple[int, int | str]:
    """The orderingVal of delete records: zero of the ordering field's type (hudi-rs then
    orders a delete against a version by commit time; it needs the types to match)."""
    t = schema.field(field).type if schema is not None and field in schema.names else None
    if t is not None and pa.types.is_string(t):
        return ORDERING_STRING, ""
    if t is not None and pa.types.is_integer(t) and t.bit_width <= 32 and t != pa.uint32():
        return ORDERING_INT, 0
    return ORDERING_LONG, 0


def delete_log_bytes(keys: pa.Array, header: dict[int, str], ordering: tuple) -> bytes:
    content = encode_delete_content(record_keys(keys).to_pylist(), ordering)
    return encode_block(DELETE_BLOCK, header, content)


def delete_markers(keys: pa.Array, key: str, instant: str, file_name: str) -> pa.Table:
    n = len(keys)
    columns = {
        COMMIT_TIME: pa.repeat(pa.scalar(instant, pa.string()), n),
        RECORD_KEY: record_keys(keys),
        PARTITION_PATH: pa.repeat(pa.scalar("", pa.string()), n),
        FILE_NAME: pa.repeat(pa.scalar(file_name, pa.string()), n),
        key: keys,
        IS_DELETED: pa.repeat(pa.scalar(True), n),
    }
    return pa.table(columns)


def decode_log(
    data: bytes, name: str, key: str, key_type: pa.DataType, path: str | None = None
) -> pa.Table:
    """A log file's rows in block order (torn blocks skipped, as Hudi's reader does);
    CorruptFileError names `path` (default `name`) for a file that is no Hudi log."""
    parts = []
    try:
        for block in read_blocks(data):
            if block.block_type == PARQUET_DATA_BLOCK:
                parts.append(pq.read_table(pa.BufferReader(block.content)))
            elif block.block_type == AVRO_DATA_BLOCK:
                parts.append(decode_avro_block(block.content, block.header[SCHEMA]))
            elif block.block_type == DELETE_BLOCK:
                keys = pa.array(decode_delete_keys(block.content), pa.string()).cast(key_type)
                parts.append(delete_markers(keys, key, block.instant or "", name))
            else:  # command (rollback) and other blocks: the engine writes none
                raise LogFormatError(f"unsupported log block type {block.block_type}")
    except (LogFormatError, *_UNREADABLE) as e:
        raise CorruptFileError(path or name, str(e)) from None
    if not parts:  # torn: nothing readable
        return pa.schema([*META_FIELDS, pa.field(key, key_type)]).empty_table()
    return concat(parts)


def file_rows(storage: Storage, name: str) -> int:
    """Rows stored in a data file (Parquet footers; a delete block counts its keys)."""
    if not is_log(name):
        return storage.parquet_rows(name)
    total = 0
    for block in read_blocks(storage.read_bytes(name)):
        if block.block_type == PARQUET_DATA_BLOCK:
            total += pq.ParquetFile(pa.BufferReader(block.content)).metadata.num_rows
        elif block.block_type == AVRO_DATA_BLOCK:
            total += avro_block_rows(block.content)
        elif block.block_type == DELETE_BLOCK:
            total += len(decode_delete_keys(block.content))
    return total


def data_schema(storage: Storage, name: str) -> pa.Schema | None:
    """The data columns of a file (without meta columns); None for a delete-only log."""
    data = storage.read_bytes(name)
    if is_log(name):
        blocks = [b for b in read_blocks(data) if b.block_type == PARQUET_DATA_BLOCK]
        if not blocks:
            return None
        data = blocks[0].content
    full = pq.read_schema(pa.BufferReader(data))
    return pa.schema([f for f in full if f.name not in (*HOODIE_META, IS_DELETED)])


def key_type(schema: pa.Schema | None, key: str) -> pa.DataType:
    """The key column's type (string while no schema is known)."""
    return schema.field(key).type if schema is not None and key in schema.names else pa.string()
