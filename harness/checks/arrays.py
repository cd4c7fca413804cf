"""Turning the columns the runner reads from the table into arrays the checkers can use,
and comparing two readers' rows key by key."""

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def as_arrow(values: Any) -> pa.Array:
    """One contiguous Arrow array from an Array, ChunkedArray, numpy array or list."""
    if isinstance(values, pa.ChunkedArray):
        return values.combine_chunks()
    if isinstance(values, pa.Array):
        return values
    return pa.array(values)


def int_ids(values: Any) -> tuple[np.ndarray, int]:
    """The non-null ids as int64, and how many were null (a row without an id is a bug)."""
    if isinstance(values, np.ndarray) and values.dtype.kind in "iu":
        return values.astype(np.int64, copy=False), 0
    array = as_arrow(values)
    nulls = array.null_count
    if nulls:
        array = pc.drop_null(array)
    return np.asarray(array.cast(pa.int64()).to_numpy(zero_copy_only=False)), nulls


# Appended to the right table's column names where two tables are joined side by side.
OTHER = "\x00other"


def differences(
    left: pa.Table, right: pa.Table, key: str
) -> tuple[pa.Table, pa.ChunkedArray, dict[str, int]]:
    """The rows of keys both hold, side by side (right's columns named `name + OTHER`);
    per joined row, whether any column but the key differs (a null equals only a null);
    and how many rows differ in each column that does. `right` has left's columns."""
    renamed = right.rename_columns([n if n == key else n + OTHER for n in right.column_names])
    joined = left.join(renamed, key, join_type="inner")
    differs = pa.chunked_array([pa.array([False] * joined.num_rows, pa.bool_())])
    per_column = {}
    for name in (n for n in left.column_names if n != key):
        a, b = joined.column(name), joined.column(name + OTHER)
        ne = pc.or_(pc.fill_null(pc.not_equal(a, b), False), pc.xor(pc.is_null(a), pc.is_null(b)))
        if pc.any(ne).as_py():
            per_column[name] = pc.sum(ne).as_py()
            differs = pc.or_(differs, ne)
    return joined, differs, per_column
