"""Routing by file group (harness/pipeline/routing.py, engine.layout.index.route_keys):
with the dynamic index, keys that batch writers placed away from their bucket, new keys
and repeated keys, every file group of a micro-batch goes to exactly one writer task, and
those tasks' writes commit; split by source partition instead, two tasks write one group
and the commit refuses the instant. No Spark: the shuffle is Spark's hash partitioning of
the route column, which route_values inverts (covered by the integration smoke run)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pyarrow as pa
import pytest

from engine.config import TableConfig
from engine.errors import EngineError
from engine.layout.index import owner_tasks, route_keys
from engine.table import Table
from engine.table.writer import dynamic_index
from harness.pipeline.routing import (
    ROUTE_COLUMN,
    RouteConfig,
    owners_of,
    route_batches,
    without_route,
)
from tests.unit.engine.engine_helpers import rows

TASKS = 2
VALUES = [1000, 2000]  # stand-ins for route_values: task t's value


def _table(path: str, table_type: str) -> Table:
    table = Table.create(path, TableConfig(table_type=table_type, file_groups=4, index="dynamic"))
    # Two batch writers insert keys into the groups they prefer (not the keys' buckets).
    for writer, keys in (("a", range(0, 30)), ("b", range(100, 120))):
        other = Table.open(path, writer_id=writer, max_skew_ms=0)
        with other.transaction() as txn:
            txn.write(rows(keys), op="insert")
        other.close()
    return table.reload()


def _config(table: Table) -> RouteConfig:
    return RouteConfig(
        table_path=table.path,
        key_field="id",
        file_groups=4,
        index="dynamic",
        op="upsert",
        tasks=TASKS,
        route_values=VALUES,
        as_of=table.timeline.last_completion_time(),
    )


def _batch() -> pa.Table:
    keys = [*range(0, 30), *range(100, 120), *range(200, 240), 5, 105, 205, 5]  # repeats
    return rows(keys, [k + 1 for k in keys])


def _write_and_commit(table: Table, parts: dict[int, pa.Table]) -> str:
    instant = table.start_instant()
    stats = []
    for task, part in sorted(parts.items()):
        writer = Table.open(
            table.path, writer_id=f"writer:{task}", max_skew_ms=0, new_keys_by_bucket=True
        )
        stats += writer.write_files(instant, part, "upsert", write_token=f"{task}-0-0")
        writer.close()
    return table.commit(instant, stats)


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_each_file_group_goes_to_exactly_one_task_and_the_instant_commits(tmp_path, table_type):
    table = _table(str(tmp_path / "t"), table_type)
    cfg = _config(table)
    batch = _batch()
    keys = batch.column("id")
    owners = owners_of(keys, cfg)
    route = route_keys(keys, "upsert", 4, dynamic_index(table.catalog, table.view(), table.config))
    groups = np.array(route.file_ids)[route.codes]
    tasks_of_group = defaultdict(set)
    for group, task in zip(groups, owners, strict=True):
        tasks_of_group[group].add(int(task))
    assert all(len(t) == 1 for t in tasks_of_group.values()), tasks_of_group
    placed_by_a = table.snapshot(file_ids=[groups[0]])["id"].to_pylist()
    assert set(range(30)) <= set(placed_by_a)  # known keys stay where the index has them
    assert len(tasks_of_group) > 2 and set(owners) == {0, 1}

    parts = {t: batch.filter(pa.array(owners == t)) for t in range(TASKS)}
    _write_and_commit(table, parts)
    snapshot = table.snapshot()
    ids = snapshot["id"].to_pylist()
    assert len(ids) == len(set(ids)) == len(set(keys.to_pylist()))
    assert dict(zip(ids, snapshot["v"].to_pylist(), strict=True))[205] == 206
    table.timeline.reload()
    last = table.timeline.completed()[-1]
    tokens_of_group = defaultdict(set)
    for f in table.catalog.files_of(last):
        tokens_of_group[f.file_id].add(f.write_token)
    assert all(len(t) == 1 for t in tokens_of_group.values())


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_split_by_source_partition_two_tasks_write_a_group_and_commit_refuses(tmp_path, table_type):
    table = _table(str(tmp_path / "t"), table_type)
    batch = _batch()
    parity = (np.array(batch.column("id").to_pylist()) % 2).astype(bool)
    parts = {0: batch.filter(pa.array(~parity)), 1: batch.filter(pa.array(parity))}
    with pytest.raises(EngineError, match="file group"):
        _write_and_commit(table, parts)


def test_route_column_is_added_for_the_shuffle_and_dropped_for_the_writer(tmp_path):
    table = _table(str(tmp_path / "t"), "mor")
    batch = _batch().to_batches()[0]
    (routed,) = route_batches(iter([batch]), cfg=_config(table).to_dict())
    assert set(routed.column(ROUTE_COLUMN).to_pylist()) == set(VALUES)
    assert without_route(routed).equals(batch)


def test_bucket_groups_are_owned_like_the_sources_key_routing():
    ids = ["fg-0000", "fg-0001", "fg-0002", "fg-0003", "ap-1f"]
    owners = owner_tasks(ids, 2)
    assert owners[:4].tolist() == [0, 1, 0, 1] and owners[4] in (0, 1)
