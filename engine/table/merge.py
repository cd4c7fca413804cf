"""Vectorised record merging (no per-row Python).

Rows are concatenated in commit order (base first, then logs/batches in order); the last
row of each key wins, then deleted keys are dropped.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

COMMIT_TIME = "_hoodie_commit_time"
IS_DELETED = "_hoodie_is_deleted"
META_COLUMNS = (COMMIT_TIME, IS_DELETED)
_POS = "__pos"


def add_meta(records: pa.Table, instant: str, deleted: bool) -> pa.Table:
    n = records.num_rows
    records = records.append_column(COMMIT_TIME, pa.repeat(pa.scalar(instant, pa.string()), n))
    return records.append_column(IS_DELETED, pa.repeat(pa.scalar(deleted), n))


def concat(tables: list[pa.Table]) -> pa.Table:
    """Concatenate by column name; columns missing in a table become nulls (delete rows)."""
    if len(tables) == 1:
        return tables[0]
    return pa.concat_tables(tables, promote_options="default")


def last_per_key(table: pa.Table, keys: list[str]) -> pa.Table:
    """The last row of every distinct key combination (rows keep their relative order)."""
    n = table.num_rows
    if n == 0:
        return table
    probe = table.select(keys).append_column(_POS, pa.array(np.arange(n, dtype=np.int64)))
    winners = probe.group_by(keys, use_threads=False).aggregate([(_POS, "max")])
    idx = np.sort(winners.column(f"{_POS}_max").to_numpy())
    return table if len(idx) == n else table.take(pa.array(idx))


def precombine(records: pa.Table, key: str, ordering_field: str | None) -> pa.Table:
    """Deduplicate one batch: the largest ordering value wins, ties (or no field) the later row."""
    if ordering_field is not None and ordering_field in records.column_names:
        records = records.take(pc.sort_indices(records, [(ordering_field, "ascending")]))
    return last_per_key(records, [key])


def drop_deleted(table: pa.Table) -> pa.Table:
    deleted = table.column(IS_DELETED)
    if deleted.null_count == 0 and not pc.any(deleted).as_py():
        return table
    return table.filter(pc.invert(pc.fill_null(deleted, False)))
