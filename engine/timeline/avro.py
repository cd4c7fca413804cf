"""Avro object container files of one record, written by an encoder compiled from the
schema (records, maps, arrays, two-branch unions with null, string, long, int, boolean).

fastavro reads them (and any Avro file Hudi itself writes); it also could write them, but
a commit of 1,000 files spent 70% of its time in fastavro's writer: the compiled closures
here encode the same bytes about four times faster. Reading skips fastavro's parse of the
embedded schema when it is the writer's own (one parse per process instead of per file).
"""

from __future__ import annotations

import io
import json
import os
import struct
from collections.abc import Callable
from typing import Any

import fastavro

Encoder = Callable[[Any, list[bytes]], None]

_MAGIC = b"Obj\x01"
_SYNC = os.urandom(16)  # the spec's per-file sync marker; one per process serves as well
_NULL, _SECOND = b"\x00", b"\x02"  # union branch 0 and 1 (zig-zag varints)


def optional_field(name: str, avro_type: Any) -> dict[str, Any]:
    """A record field that may be null (Hudi's schemas make most fields so), default null."""
    return {"name": name, "type": ["null", avro_type], "default": None}


def encode_long(n: int) -> bytes:
    """Avro `long`/`int`: zig-zag, then a base-128 varint."""
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _string(value: str, out: list[bytes]) -> None:
    data = value.encode()
    out.append(encode_long(len(data)))
    out.append(data)


def _long(value: int, out: list[bytes]) -> None:
    out.append(encode_long(value))


def _boolean(value: bool, out: list[bytes]) -> None:
    out.append(b"\x01" if value else b"\x00")


def _double(value: float, out: list[bytes]) -> None:
    out.append(struct.pack("<d", value))  # Avro: IEEE 754, little-endian


_PRIMITIVES: dict[str, Encoder] = {
    "string": _string,
    "long": _long,
    "int": _long,
    "boolean": _boolean,
    "double": _double,
}


def compile_encoder(schema: Any) -> Encoder:
    """An encoder for `schema` (JSON form); ValueError for what it does not cover."""
    if isinstance(schema, str):
        if schema not in _PRIMITIVES:
            raise ValueError(f"Avro type {schema!r} is not supported here")
        return _PRIMITIVES[schema]
    if isinstance(schema, list):
        return _union(schema)
    kind = schema["type"]
    if kind == "record":
        fields = [(f["name"], compile_encoder(f["type"])) for f in schema["fields"]]

        def record(value: dict[str, Any], out: list[bytes]) -> None:
            for name, encode in fields:
                encode(value.get(name), out)

        return record
    if kind in ("map", "array"):
        items = compile_encoder(schema["values" if kind == "map" else "items"])

        def block(value: Any, out: list[bytes]) -> None:
            if value:
                out.append(encode_long(len(value)))
                if kind == "map":
                    for key, item in value.items():
                        _string(key, out)
                        items(item, out)
                else:
                    for item in value:
                        items(item, out)
            out.append(b"\x00")  # the end of the blocks

        return block
    return compile_encoder(kind)  # {"type": "string"} and the like


def _union(branches: list[Any]) -> Encoder:
    if len(branches) != 2 or "null" not in branches:
        raise ValueError(f"only [null, T] unions are supported here, got {branches}")
    null_first = branches[0] == "null"
    encode = compile_encoder(branches[1] if null_first else branches[0])
    present, absent = (_SECOND, _NULL) if null_first else (_NULL, _SECOND)

    def union(value: Any, out: list[bytes]) -> None:
        if value is None:
            out.append(absent)
        else:
            out.append(present)
            encode(value, out)

    return union


def _read_long(data: bytes, pos: int) -> tuple[int, int]:
    n = shift = 0
    while True:
        b = data[pos]
        pos += 1
        n |= (b & 0x7F) << shift
        if b < 0x80:
            return (n >> 1) ^ -(n & 1), pos
        shift += 7


def _read_bytes(data: bytes, pos: int) -> tuple[bytes, int]:
    size, pos = _read_long(data, pos)
    if size < 0 or pos + size > len(data):
        raise ValueError("truncated")
    return data[pos : pos + size], pos + size


class ContainerCodec:
    """Writes one-record container files of a fixed schema (no compression); reads any
    container file's records (fastavro), the writer's own files without a schema parse."""

    def __init__(self, schema: dict[str, Any]) -> None:
        self.encode = compile_encoder(schema)
        self.schema_json = json.dumps(schema).encode()
        self.parsed = fastavro.parse_schema(schema)
        meta = [("avro.schema", self.schema_json), ("avro.codec", b"null")]
        header = [_MAGIC, encode_long(len(meta))]
        for key, value in meta:
            header += [encode_long(len(key)), key.encode(), encode_long(len(value)), value]
        self.header = b"".join([*header, b"\x00", _SYNC])

    def write(self, record: dict[str, Any]) -> bytes:
        out: list[bytes] = []
        self.encode(record, out)
        data = b"".join(out)
        return b"".join([self.header, b"\x02", encode_long(len(data)), data, _SYNC])

    def read(self, data: bytes) -> list[Any]:
        """The records of a container file; ValueError (or fastavro's errors) if it is not
        one."""
        try:
            records = self._read_own(data)
        except (ValueError, IndexError, EOFError):
            records = None
        if records is not None:
            return records
        return list(fastavro.reader(io.BytesIO(data)))

    def _read_own(self, data: bytes) -> list[Any] | None:
        """One uncompressed block written with this schema, else None (the general path)."""
        if data[:4] != _MAGIC:
            return None
        meta, pos = {}, 4
        while True:
            count, pos = _read_long(data, pos)
            if count == 0:
                break
            if count < 0:  # a block size follows a negative count
                count = -count
                _, pos = _read_long(data, pos)
            for _ in range(count):
                key, pos = _read_bytes(data, pos)
                meta[key], pos = _read_bytes(data, pos)
        if meta.get(b"avro.schema") != self.schema_json or meta.get(b"avro.codec", b"null") != (
            b"null"
        ):
            return None
        sync, pos = data[pos : pos + 16], pos + 16
        count, pos = _read_long(data, pos)
        block, pos = _read_bytes(data, pos)
        if count != 1 or data[pos:] != sync:
            return None
        return [fastavro.schemaless_reader(io.BytesIO(block), self.parsed, None)]
