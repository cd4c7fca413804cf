"""Helpers shared by the engine unit tests."""

from __future__ import annotations

import pyarrow as pa

from engine.config import Safety


def rows(ids, values=None) -> pa.Table:
    ids = list(ids)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "v": pa.array(values if values is not None else [i * 10 for i in ids], pa.int64()),
        }
    )


def as_dict(table: pa.Table) -> dict[int, int]:
    d = table.to_pydict()
    if not d:  # an empty table whose schema is not known yet
        return {}
    return dict(zip(d["id"], d["v"], strict=True))


UNSAFE = Safety(
    occ=False,
    pk_check=False,
    put_if_absent=False,
    strict_monotonic=False,
    completion_time_slicing=False,
)
