"""What a data file's Parquet encoding keeps: statistics where a reader may prune by them."""

import pyarrow as pa
import pyarrow.parquet as pq

from engine.table.data_files import parquet_bytes
from engine.table.merge import COMMIT_TIME, RECORD_KEY, add_meta


def test_statistics_on_data_columns_and_commit_time_not_on_bytes_or_unique_meta():
    rows = pa.table({"id": [1, 2, 3], "payload": [b"a", b"b", b"c"], "name": ["x", "y", "z"]})
    table = add_meta(rows, "id", "20260101000000000", 0, "f.parquet")
    meta = pq.ParquetFile(pa.BufferReader(parquet_bytes(table))).metadata.row_group(0)
    stats = {
        meta.column(i).path_in_schema: meta.column(i).is_stats_set for i in range(meta.num_columns)
    }
    assert stats["id"] and stats["name"] and stats[COMMIT_TIME]
    assert not stats["payload"] and not stats[RECORD_KEY]
