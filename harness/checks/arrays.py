"""Turning the columns the runner reads from the table into arrays the checkers can use."""

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
