"""A data file torn after it is written fails its write (verify_writes), so the writer
retries; with the switch off the torn file is only caught at commit, after the fact."""

import os

import pyarrow as pa
import pytest

from engine.config import Safety, TableConfig
from engine.errors import CorruptFileError
from engine.table import Table


def _tear(path: str) -> None:
    if path.endswith(".parquet"):
        with open(path, "r+b") as f:
            f.truncate(os.path.getsize(path) // 2)


def _table(tmp_path, verify: bool) -> Table:
    table = Table.create(
        str(tmp_path / "t"), TableConfig(), max_skew_ms=0, safety=Safety(verify_writes=verify)
    )
    table.storage.after_write_hooks.append(_tear)
    return table


def test_a_torn_file_fails_the_write(tmp_path):
    table = _table(tmp_path, verify=True)
    instant = table.start_instant()
    with pytest.raises(CorruptFileError, match="torn write"):
        table.write_files(instant, pa.table({"id": [1, 2, 3]}), op="insert", write_token="0-0-0")


def test_without_verification_the_commit_refuses_the_torn_file(tmp_path):
    table = _table(tmp_path, verify=False)
    instant = table.start_instant()
    stats = table.write_files(
        instant, pa.table({"id": [1, 2, 3]}), op="insert", write_token="0-0-0"
    )
    with pytest.raises(CorruptFileError):
        table.commit(instant, stats)
    assert table.snapshot().num_rows == 0
