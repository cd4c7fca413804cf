"""Apache Hudi's Avro data block (log block type 3): what Hudi's Spark writer appends to a
merge-on-read log by default. The engine writes Parquet data blocks; it reads these in
tables Hudi wrote.

Content (big-endian): int32 block version, int32 record count, then per record an int32
length and the record in Avro's binary encoding under the writer schema, which the block's
header carries (header key SCHEMA) as Avro JSON.
"""

from __future__ import annotations

import io
import json
import struct
from typing import Any

import fastavro
import pyarrow as pa

_I32 = struct.Struct(">i")
# Avro primitives as Arrow types (Hudi's Spark writer makes every column a union with null).
_ARROW_OF = {
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "bytes": pa.binary(),
    "string": pa.string(),
}


def arrow_schema(avro_schema: dict[str, Any]) -> pa.Schema:
    """The Arrow schema of a flat Avro record of primitives (ValueError for others)."""
    return pa.schema([_arrow_field(f) for f in avro_schema["fields"]])


def data_columns(avro_schema_json: str) -> pa.Schema:
    """The data columns (Hudi's meta columns left out) of a commit's Avro schema."""
    schema = arrow_schema(json.loads(avro_schema_json))
    return pa.schema([f for f in schema if not f.name.startswith("_hoodie_")])


def _arrow_field(field: dict[str, Any]) -> pa.Field:
    kinds = field["type"] if isinstance(field["type"], list) else [field["type"]]
    named = [k for k in kinds if k != "null"]
    if len(named) != 1 or not isinstance(named[0], str) or named[0] not in _ARROW_OF:
        raise ValueError(f"column {field['name']!r} has type {field['type']}: not a primitive")
    return pa.field(field["name"], _ARROW_OF[named[0]], nullable="null" in kinds)


def avro_block_rows(content: bytes) -> int:
    return int(_I32.unpack_from(content, 4)[0])


def decode_avro_block(content: bytes, schema_json: str) -> pa.Table:
    """The rows of an Avro data block as an Arrow table of the writer schema (errors:
    struct.error, ValueError, EOFError and those fastavro raises on bad bytes)."""
    writer = json.loads(schema_json)
    parsed = fastavro.parse_schema(writer)
    pos, rows = 8, []
    for _ in range(avro_block_rows(content)):
        length = _I32.unpack_from(content, pos)[0]
        record = io.BytesIO(content[pos + 4 : pos + 4 + length])
        rows.append(fastavro.schemaless_reader(record, parsed, None))
        pos += 4 + length
    return pa.Table.from_pylist(rows, schema=arrow_schema(writer))
