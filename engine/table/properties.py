"""`.hoodie/hoodie.properties` (JSON): the table config and, optionally, its schema."""

from __future__ import annotations

import base64
import json
from typing import Any

import pyarrow as pa

from engine.config import TableConfig
from engine.errors import NotATableError
from engine.storage import Storage

PROPERTIES = ".hoodie/hoodie.properties"
FORMAT_VERSION = 1


def encode_schema(schema: pa.Schema) -> str:
    return base64.b64encode(schema.serialize().to_pybytes()).decode()


def decode_schema(text: str) -> pa.Schema:
    return pa.ipc.read_schema(pa.BufferReader(base64.b64decode(text)))


def write_properties(storage: Storage, config: TableConfig, schema: pa.Schema | None) -> None:
    """Create the properties file; FileExistsError if a table is already there."""
    props: dict[str, Any] = {
        "format_version": FORMAT_VERSION,
        "table": config.to_dict(),
        "schema": encode_schema(schema) if schema is not None else None,
    }
    storage.put_if_absent(PROPERTIES, json.dumps(props, indent=1).encode())


def read_properties(storage: Storage) -> tuple[TableConfig, pa.Schema | None]:
    try:
        props = json.loads(storage.read_bytes(PROPERTIES))
    except FileNotFoundError:
        raise NotATableError(storage.root) from None
    schema = decode_schema(props["schema"]) if props.get("schema") else None
    return TableConfig.from_dict(props["table"]), schema
