"""Storage.write_verified with an encoder (a data file streamed into its temp file, or into
one buffer for an S3 PUT): the same guarantees as a write of bytes, on both backends."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.errors import CorruptFileError
from engine.storage import ResponseLostError, Storage
from engine.table.data_files import parquet_bytes, parquet_encoder

ROWS = pa.table({"id": list(range(1000)), "v": [f"value {i}" for i in range(1000)]})


def test_an_encoded_file_lands_whole_with_its_size(storage_root):
    s = Storage(storage_root)
    size = s.write_verified("d/f.parquet", parquet_encoder(ROWS))
    data = s.read_bytes("d/f.parquet")
    assert size == len(data) == len(parquet_bytes(ROWS))
    assert pq.read_table(pa.BufferReader(data)).equals(ROWS)
    assert s.list("d") == ["f.parquet"]  # no temp file left


def test_a_lost_response_encodes_again_and_lands_once(storage_root):
    s = Storage(storage_root)
    calls = []

    def encoder(out: pa.NativeFile) -> None:
        calls.append(1)
        parquet_encoder(ROWS)(out)

    lost = []

    def lose_first(op: str, _path: str) -> None:
        if op == "put" and not lost:
            lost.append(op)
            raise ResponseLostError("lost response")

    s.hooks.append(lose_first)
    s.write_verified("d/f.parquet", encoder)
    assert len(calls) == 2
    assert pq.read_table(pa.BufferReader(s.read_bytes("d/f.parquet"))).equals(ROWS)
    assert s.list("d") == ["f.parquet"]


def test_a_failing_put_hook_encodes_nothing(storage_root):
    s = Storage(storage_root)
    calls = []

    def refuse(op: str, _path: str) -> None:
        if op == "put":
            raise OSError("injected")

    s.hooks.append(refuse)
    with pytest.raises(OSError, match="injected"):
        s.write_verified("d/f.parquet", lambda out: calls.append(out))
    assert calls == []
    assert s.list("d") == []


def test_a_torn_encoded_file_fails_the_write(storage_root):
    s = Storage(storage_root)
    s.after_write_hooks.append(lambda full: s.raw_write(full, s.raw_read(full)[:10]))
    with pytest.raises(CorruptFileError, match="torn write"):
        s.write_verified("f.parquet", parquet_encoder(ROWS))


def test_a_failing_encoder_leaves_no_temp_file(tmp_path):
    s = Storage(str(tmp_path / "t"))

    def broken(out: pa.NativeFile) -> None:
        out.write(b"partial")
        raise ValueError("bad rows")

    with pytest.raises(ValueError, match="bad rows"):
        s.write_verified("d/f.parquet", broken)
    assert s.list("d") == []
