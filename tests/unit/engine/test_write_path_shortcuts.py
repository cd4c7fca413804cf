"""The write path's shortcuts keep what is written: precombine skips its group-by only for
distinct keys, and data files keep dictionaries for low-cardinality columns."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq

from engine.table.data_files import parquet_bytes
from engine.table.merge import distinct_keys, precombine


def test_distinct_keys_skip_precombine_and_repeated_ones_are_deduplicated():
    rows = pa.table({"id": [1, 2, 5], "ts": [9, 3, 7]})
    assert precombine(rows, "id", "ts") is rows  # distinct: nothing to do, order kept
    unordered = pa.table({"id": [3, 1, 2], "ts": [1, 2, 3]})
    assert precombine(unordered, "id", None) is unordered
    assert distinct_keys(pa.chunked_array([["a", "b"], ["c"]]))
    assert not distinct_keys(pa.array([1, 1, 2]))  # equal neighbours
    assert not distinct_keys(pa.array([2, 1, 2]))  # a repeat that is no neighbour
    assert distinct_keys(pa.array([2**63 - 1, -(2**63), 0]))  # integers: numpy's sort
    assert not distinct_keys(pa.array(["b", "a", "b"]))  # others: a hash set
    dup = pa.table({"id": [1, 2, 1], "ts": [9, 3, 7]})
    assert precombine(dup, "id", "ts").to_pydict() == {"id": [2, 1], "ts": [3, 9]}


def test_low_cardinality_columns_keep_their_dictionary():
    n = 50_000
    rows = pa.table({"id": pa.array(range(n), pa.int64()), "account": [i % 50 for i in range(n)]})
    data = parquet_bytes(rows)
    account = pq.ParquetFile(pa.BufferReader(data)).metadata.row_group(0).column(1)
    assert account.has_dictionary_page and account.total_compressed_size < 20_000
    assert pq.read_table(pa.BufferReader(data)).equals(rows)
