"""Apache Hudi's log-block format (HoodieLogFormat version 1), as Hudi 1.x writes MOR logs.

A log file is a sequence of blocks; each block is (big-endian):

    "#HUDI#"                      magic
    int64  block length           everything after this field up to the block's end
    int32  log format version     1
    int32  block type             ordinal: 1 DELETE_BLOCK, 5 PARQUET_DATA_BLOCK, ...
    header                        int32 count, then per entry: int32 key ordinal,
                                  int32 length, UTF-8 value
    int64  content length
    content                       Parquet data block: a whole Parquet file;
                                  delete block: int32 version 3, int32 length, Avro
                                  HoodieDeleteRecordList (recordKey, partitionPath,
                                  orderingVal per key)
    footer                        same layout as the header (empty here)
    int64  reverse pointer        the block's length from the magic up to this field

The engine writes one block per log file (one write_files call, one file group): a
Parquet data block for upserts and inserts, a delete block for deletes (hudi-rs 0.5.0
reads deletes only from delete blocks; it ignores `_hoodie_is_deleted` in data rows).
A reader skips a block that is torn (its length runs past the end of the file, or the
reverse pointer at its end disagrees with its length) up to the next magic, as Hudi's
HoodieLogFileReader does for a partial write after a crash.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

MAGIC = b"#HUDI#"
LOG_FORMAT_VERSION = 1
DELETE_BLOCK_VERSION = 3  # the content version of Hudi's delete blocks (log block V3)

# HoodieLogBlockType ordinals the engine writes (0 command, 2 corrupt, 4 HFile data and
# 6 CDC data it neither writes nor reads; 3, Avro data, it reads in tables Hudi wrote)
DELETE_BLOCK, AVRO_DATA_BLOCK, PARQUET_DATA_BLOCK = 1, 3, 5
# HeaderMetadataType ordinals (1 TARGET_INSTANT_TIME, 3 COMMAND_BLOCK_TYPE: rollback blocks)
INSTANT_TIME, SCHEMA = 0, 2

_I32, _I64 = struct.Struct(">i"), struct.Struct(">q")
_MIN_BLOCK = 4 + 4 + 4 + 8 + 4 + 8  # version, type, empty header, content length, footer, ptr


class LogFormatError(ValueError):
    """A log file that is not in Hudi's log format at all (not a torn tail)."""


@dataclass(frozen=True)
class LogBlock:
    block_type: int
    header: dict[int, str]
    content: bytes
    footer: dict[int, str]

    @property
    def instant(self) -> str | None:
        return self.header.get(INSTANT_TIME)


def _metadata_bytes(metadata: dict[int, str]) -> bytes:
    parts = [_I32.pack(len(metadata))]
    for key, value in metadata.items():
        raw = value.encode()
        parts += [_I32.pack(key), _I32.pack(len(raw)), raw]
    return b"".join(parts)


def encode_block(
    block_type: int,
    header: dict[int, str],
    content: bytes | memoryview,
    footer: dict[int, str] | None = None,
) -> bytes:
    """One block, byte for byte as HoodieLogFormatWriter.appendBlock writes it."""
    head, foot = _metadata_bytes(header), _metadata_bytes(footer or {})
    length = 4 + 4 + len(head) + 8 + len(content) + len(foot) + 8
    return b"".join(
        (
            MAGIC,
            _I64.pack(length),
            _I32.pack(LOG_FORMAT_VERSION),
            _I32.pack(block_type),
            head,
            _I64.pack(len(content)),
            content,
            foot,
            _I64.pack(len(MAGIC) + 8 + length - 8),
        )
    )


def _read_metadata(data: bytes, pos: int) -> tuple[dict[int, str], int]:
    (count,) = _I32.unpack_from(data, pos)
    pos += 4
    out: dict[int, str] = {}
    for _ in range(count):
        key, size = _I32.unpack_from(data, pos)[0], _I32.unpack_from(data, pos + 4)[0]
        out[key] = data[pos + 8 : pos + 8 + size].decode()
        pos += 8 + size
    return out, pos


def _whole(data: bytes, start: int) -> int | None:
    """The end of the block at `start` if it is whole, else None (torn or corrupt)."""
    if start + len(MAGIC) + 8 > len(data):
        return None
    (length,) = _I64.unpack_from(data, start + len(MAGIC))
    end = start + len(MAGIC) + 8 + length
    if length < _MIN_BLOCK or end > len(data):
        return None
    if _I64.unpack_from(data, end - 8)[0] != end - start - 8:
        return None
    return end


def read_blocks(data: bytes) -> Iterator[LogBlock]:
    """The whole blocks of a log file; a corrupt block is skipped up to the next magic."""
    if data and not data.startswith(MAGIC):
        raise LogFormatError("not a Hudi log file (no #HUDI# magic at its start)")
    pos = 0
    while pos < len(data):
        end = _whole(data, pos)
        if end is None:  # Hudi: a corrupt block; resume at the next magic, if any
            nxt = data.find(MAGIC, pos + len(MAGIC))
            if nxt < 0:
                return
            pos = nxt
            continue
        p = pos + len(MAGIC) + 8
        version, block_type = _I32.unpack_from(data, p)[0], _I32.unpack_from(data, p + 4)[0]
        if version != LOG_FORMAT_VERSION:
            raise LogFormatError(f"log format version {version}, only 1 is supported")
        header, p = _read_metadata(data, p + 8)
        (size,) = _I64.unpack_from(data, p)
        content = data[p + 8 : p + 8 + size]
        footer, _ = _read_metadata(data, p + 8 + size)
        yield LogBlock(block_type, header, content, footer)
        pos = end


# -- delete blocks: Avro HoodieDeleteRecordList, binary encoded ----------------------------

# orderingVal union branch: 0 null (refused by hudi-rs), 1 int, 2 long, 6 string
ORDERING_INT, ORDERING_LONG, ORDERING_STRING = 1, 2, 6


def _zigzag(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n & ~0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _avro_string(text: str) -> bytes:
    raw = text.encode()
    return _zigzag(len(raw)) + raw


def encode_delete_content(keys: Sequence[str], ordering: tuple[int, int | str]) -> bytes:
    """The content of a delete block: every key with partition path "" and one ordering
    value (`(branch, value)`; hudi-rs compares a zero ordering value by commit time)."""
    branch, value = ordering
    tail = _zigzag(1) + _avro_string("") + _zigzag(branch)  # partitionPath: string ""
    tail += _avro_string(str(value)) if branch == ORDERING_STRING else _zigzag(int(value))
    items = b"".join(_zigzag(1) + _avro_string(k) + tail for k in keys)
    avro = (_zigzag(len(keys)) + items if keys else b"") + _zigzag(0)
    return _I32.pack(DELETE_BLOCK_VERSION) + _I32.pack(len(avro)) + avro


class _AvroReader:
    def __init__(self, data: bytes, pos: int) -> None:
        self.data, self.pos = data, pos

    def long(self) -> int:
        shift = n = 0
        while True:
            b = self.data[self.pos]
            self.pos += 1
            n |= (b & 0x7F) << shift
            if not b & 0x80:
                return (n >> 1) ^ -(n & 1)
            shift += 7

    def string(self) -> str:
        size = self.long()
        self.pos += size
        return self.data[self.pos - size : self.pos].decode()

    def skip_union_value(self, branch: int) -> None:
        if branch in (1, 2, 8, 9, 10, 11, 12):  # int, long and their logical types
            self.long()
        elif branch in (3, 4):  # float, double
            self.pos += 4 if branch == 3 else 8
        elif branch in (5, 6, 7):  # bytes, string, decimal
            self.pos += self.long()


def decode_delete_keys(content: bytes) -> list[str]:
    """The record keys of a delete block (version 3 content)."""
    version = _I32.unpack_from(content, 0)[0]
    if version != DELETE_BLOCK_VERSION:
        raise LogFormatError(f"delete block version {version}, only 3 is supported")
    r = _AvroReader(content, 8)
    keys: list[str] = []
    while (count := r.long()) != 0:
        if count < 0:  # a block with its byte size
            count = -count
            r.long()
        for _ in range(count):
            keys.append(r.string() if r.long() == 1 else "")
            if r.long() == 1:
                r.string()
            r.skip_union_value(r.long())
    return keys
