"""The Avro form of a table's Arrow schema, as Hudi records it (`hoodie.table.create.schema`
and the `schema` key of a commit's extraMetadata; Hudi readers build their table schema
from it, without the `_hoodie_*` meta columns)."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa


def _avro_type(t: pa.DataType) -> Any:
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t):
        return "int"
    if pa.types.is_integer(t):
        return "long"
    if pa.types.is_float32(t):
        return "float"
    if pa.types.is_floating(t):
        return "double"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return "bytes"
    if pa.types.is_date32(t):
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_timestamp(t) and t.unit in ("ms", "us"):
        unit = "millis" if t.unit == "ms" else "micros"
        return {"type": "long", "logicalType": f"timestamp-{unit}"}
    return None


def avro_schema_json(schema: pa.Schema, table_name: str) -> str | None:
    """Hudi's record schema for `schema` (nullable fields as ["null", T] unions), or None
    when a column has a type without an Avro counterpart here (readers then take the
    schema from a base file)."""
    fields = []
    for f in schema:
        avro = _avro_type(f.type)
        if avro is None:
            return None
        if f.nullable:
            fields.append({"name": f.name, "type": ["null", avro], "default": None})
        else:
            fields.append({"name": f.name, "type": avro})
    name = "".join(c if c.isalnum() else "_" for c in table_name) or "table"
    if name[0].isdigit():  # Avro names start with a letter or "_"
        name = f"_{name}"
    record = {
        "type": "record",
        "name": f"{name}_record",
        "namespace": f"hoodie.{name}",
        "fields": fields,
    }
    return json.dumps(record, separators=(",", ":"))
