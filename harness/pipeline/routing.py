"""Routing a micro-batch by file group (Hudi's bucket assigner), before the writer tasks.

Each row's file group is decided by `engine.layout.index.route_keys` (bucket index: the
key's hash; dynamic index: the group that holds the key in the table as of one completion
time, the same snapshot in every routing task, else the key's bucket), every group has one
owner task (`owner_tasks`), and Spark's hash shuffle sends each row to its owner: in one
instant one task writes a file group, whatever the source's partitioning. COW inserts need
none of it: each write makes its own new file group.

Spark's `repartition(n, col)` sends a row to `pmod(hash(col), n)` (Murmur3, as the SQL
`hash` function); the route column holds, for owner task t, a value Spark sends to t.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from engine.layout.index import DynamicIndex, bucket_file_id, owner_tasks, route_keys
from engine.table import Table
from engine.table.writer import dynamic_index

ROUTE_COLUMN = "_instantbench_route"
_INDEXES: dict[tuple[str, str | None], DynamicIndex] = {}  # per worker process


def needs_routing(table_type: str, op: str) -> bool:
    return not (table_type == "cow" and op == "insert")


@dataclass(frozen=True)
class RouteConfig:
    table_path: str
    key_field: str
    file_groups: int
    index: str  # bucket | dynamic
    op: str
    tasks: int
    route_values: list[int]  # [t] = a value Spark's hash partitioning sends to task t
    as_of: str | None = None  # dynamic index: the completion time of its snapshot

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def route_values(spark: Any, tasks: int) -> list[int]:
    """For each task t, the smallest long that `repartition(tasks, col)` sends to t."""
    found: dict[int, int] = {}
    rows = spark.range(0, 64 * tasks).selectExpr("id", f"pmod(hash(id), {tasks}) AS p")
    for row in rows.collect():
        found.setdefault(int(row.p), int(row.id))
    if len(found) < tasks:
        raise RuntimeError(f"no route value for tasks {sorted(set(range(tasks)) - set(found))}")
    return [found[t] for t in range(tasks)]


def _index(cfg: RouteConfig) -> DynamicIndex:
    cached = _INDEXES.get((cfg.table_path, cfg.as_of))
    if cached is None:
        groups = [bucket_file_id(b) for b in range(cfg.file_groups)]
        if cfg.as_of is None:  # nothing completed yet: every key is new
            cached = DynamicIndex({}, groups)
        else:
            table = Table.open(cfg.table_path, writer_id="router")
            try:
                view = table.view(as_of=cfg.as_of)
                cached = dynamic_index(table.catalog, view, table.config)
            finally:
                table.close()
        _INDEXES.clear()  # one snapshot per batch: keep only the newest
        _INDEXES[(cfg.table_path, cfg.as_of)] = cached
    return cached


def owners_of(keys: pa.Array | pa.ChunkedArray, cfg: RouteConfig) -> np.ndarray:
    """The writer task of each row."""
    index = _index(cfg) if cfg.index == "dynamic" else None
    route = route_keys(keys, cfg.op, cfg.file_groups, index)
    return owner_tasks(route.file_ids, cfg.tasks)[route.codes]


def route_batches(
    batches: Iterator[pa.RecordBatch], *, cfg: dict[str, Any]
) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: append the route column."""
    config = RouteConfig(**cfg)
    values = np.array(config.route_values, dtype=np.int64)
    for batch in batches:
        owners = owners_of(batch.column(config.key_field), config)
        yield batch.append_column(ROUTE_COLUMN, pa.array(values[owners], pa.int64()))


def route_by_file_group(df: Any, cfg: RouteConfig) -> Any:
    """`df` repartitioned into cfg.tasks partitions, partition t holding task t's rows (with
    the route column, which the writer drops)."""
    from pyspark.sql.types import LongType, StructField, StructType

    schema = StructType([*df.schema.fields, StructField(ROUTE_COLUMN, LongType(), False)])
    fn = functools.partial(route_batches, cfg=cfg.to_dict())
    return df.mapInArrow(fn, schema).repartition(cfg.tasks, ROUTE_COLUMN)


def without_route(batch: pa.RecordBatch) -> pa.RecordBatch:
    if ROUTE_COLUMN not in batch.schema.names:
        return batch
    return batch.drop_columns([ROUTE_COLUMN])
