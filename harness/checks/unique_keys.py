"""Unique keys: a primary key lives in one row (and so in one file group) of the snapshot."""

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from harness.checks.arrays import as_arrow
from harness.checks.result import MAX_LISTED, CheckResult, capped, fail_closed

NAME = "unique_keys"


def unique_keys(keys: Any, file_groups: Any | None = None) -> CheckResult:
    """`file_groups` (same length as `keys`), when given, names where each duplicate lives."""
    keys = as_arrow(keys)
    counts = pc.value_counts(pc.drop_null(keys))  # null keys are counted apart (as on Spark)
    values, multiplicity = counts.field("values"), counts.field("counts")
    dup_mask = pc.greater(multiplicity, 1)
    order = pc.sort_indices(pc.filter(values, dup_mask))  # listed smallest key first
    dup_values = pc.take(pc.filter(values, dup_mask), order)
    dup_counts = pc.take(pc.filter(multiplicity, dup_mask), order)
    shown = dup_values.slice(0, MAX_LISTED)
    groups = _groups_of(keys, as_arrow(file_groups), shown) if file_groups is not None else {}
    return unique_keys_result(
        rows=len(keys),
        null_keys=keys.null_count,
        duplicated_keys=len(dup_values),
        extra_rows=int(pc.sum(dup_counts).as_py() or 0) - len(dup_values),
        listed=[
            {"key": k, "count": c, **({"file_groups": groups[k]} if k in groups else {})}
            for k, c in zip(shown.to_pylist(), dup_counts.to_pylist(), strict=False)
        ],
    )


def unique_keys_result(
    rows: int, null_keys: int, duplicated_keys: int, extra_rows: int, listed: list[dict]
) -> CheckResult:
    """The verdict and evidence from the counts (computed here or by Spark SQL)."""
    evidence = {
        "rows": rows,
        "null_keys": null_keys,
        "duplicated_keys": duplicated_keys,
        "extra_rows": extra_rows,
        "keys": capped(listed),
    }
    if duplicated_keys > 0 or 0 < null_keys < rows:
        return CheckResult(NAME, "invalid", evidence)  # a row without a key is a bug too
    # No key read (an empty table, or a key column that reads as all null): uniqueness
    # holds vacuously, which proves nothing.
    reasons = [
        (rows == 0, "no rows"),
        (0 < rows == null_keys, "every key is null: the key column was not read"),
    ]
    return fail_closed(NAME, evidence, reasons)


def _groups_of(keys: pa.Array, file_groups: pa.Array, shown: pa.Array) -> dict[Any, list[Any]]:
    mask = pc.is_in(keys, value_set=shown)
    pairs = pa.table({"k": pc.filter(keys, mask), "g": pc.filter(file_groups, mask)})
    grouped = pairs.group_by("k").aggregate([("g", "distinct")])
    return {
        k: sorted(g, key=str)
        for k, g in zip(grouped["k"].to_pylist(), grouped["g_distinct"].to_pylist(), strict=True)
    }
