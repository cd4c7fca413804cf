"""safety.clean_retention: on, the cleaner keeps the files reads as of each of the last N
commits need; off, it keeps only the latest slice, and reads as of the earlier retained
commits lose their files (what detect/clean-retention.yaml shows the judge catches)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from engine.config import Safety, TableConfig
from engine.errors import EngineError
from engine.table import Table, cleaning

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.int64())])


def _readable(t: Table, completion: str, v: int) -> bool:
    try:
        return t.as_of(completion).column("v").to_pylist() == [v, v]
    except (OSError, EngineError):  # a file the cleaner deleted
        return False


@pytest.mark.parametrize("retention", [True, False])
def test_reads_as_of_retained_commits_find_their_files_only_with_retention(tmp_path, retention):
    t = Table.create(
        str(tmp_path),
        TableConfig(table_type="cow", file_groups=1),
        SCHEMA,
        max_skew_ms=0,
        heartbeat_interval_s=0,
        safety=Safety(clean_retention=retention),
    )
    for v in range(5):
        with t.transaction() as tx:
            tx.write(pa.table({"id": [1, 2], "v": [v, v]}, SCHEMA), op="upsert")
    commits = [i.completed_at for i in t.timeline.completed() if i.action == "commit"]
    assert cleaning.clean(t, retain_commits=3) is not None
    reader = Table.open(str(tmp_path))  # no file cached from the writes
    retained = [_readable(reader, commits[v], v) for v in (2, 3, 4)]
    assert retained == ([True, True, True] if retention else [False, False, True])
