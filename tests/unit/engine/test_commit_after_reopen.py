"""A restarted coordinator commits an instant that its crashed predecessor started."""

import pyarrow as pa

from engine.config import TableConfig
from engine.table import Table


def test_an_instant_started_by_another_table_object_commits(tmp_path):
    first = Table.create(str(tmp_path / "t"), TableConfig(), max_skew_ms=0)
    instant = first.start_instant(metadata={"stream_checkpoint_id": 3})
    stats = first.write_files(instant, pa.table({"id": [1, 2]}), op="insert", write_token="0-0-0")
    # The process that started the instant is gone; a fresh one reads the inflight instant
    # (whose file is empty by design) and must find its metadata in the requested file.
    reopened = Table.open(str(tmp_path / "t"), max_skew_ms=0)
    requested = reopened.timeline.read_metadata(instant.requested_time)
    assert requested.extra["stream_checkpoint_id"] == 3
    reopened.commit(instant.requested_time, stats)
    assert sorted(reopened.snapshot().column("id").to_pylist()) == [1, 2]
