"""The bank check's final sweep reads the table as of every completed instant, at random
times and pull by pull, so a commit that broke the total is found even if it was fixed."""

import random
from pathlib import Path

import numpy as np
import pyarrow as pa

from engine.config import TableConfig
from engine.table import Table
from harness.checks import bank
from harness.pipeline.events import OPENING_BALANCE, SCHEMA, EventSpec, opening_balances
from harness.workload.reads import sweep_reads

SPEC = EventSpec(mode="bank", seed=1, partitions=2, accounts=4)


def legs(event: int, pairs: list[tuple[int, int]]) -> pa.Table:
    """Rows of one event: (account, amount) legs with ids 2*event, 2*event+1, ..."""
    n = len(pairs)
    return pa.Table.from_arrays(
        [
            pa.array(2 * event + np.arange(n), pa.int64()),
            pa.array([event] * n, pa.int64()),
            pa.array([0.0] * n),
            pa.array([a for a, _ in pairs], pa.int32()),
            pa.array([m for _, m in pairs], pa.int64()),
            pa.array([b""] * n, pa.binary()),
        ],
        schema=SCHEMA,
    )


def commit(table: Table, rows: pa.Table) -> None:
    instant = table.start_instant()
    table.commit(instant, table.write_files(instant, rows, op="insert"))


def check(table: Table):
    nothing_cleaned = None
    return bank(sweep_reads(table, random.Random(3), nothing_cleaned), 4 * OPENING_BALANCE, 4)


def test_a_clean_history_is_valid_and_every_instant_is_read(tmp_path: Path) -> None:
    table = Table.create(str(tmp_path / "t"), TableConfig(file_groups=2), SCHEMA, max_skew_ms=0)
    commit(table, opening_balances(SPEC))
    for event in range(5):
        commit(table, legs(event * 10, [(event % 4, -7), ((event + 1) % 4, 7)]))
    result = check(table)
    assert result.verdict == "valid", result.evidence
    # 1 snapshot + 6 instants as of their completion + 6 random times + 5 pulls
    assert result.evidence["by_kind"] == {"snapshot": 1, "as_of": 12, "incremental": 5}


def test_a_half_transfer_later_completed_is_still_caught(tmp_path: Path) -> None:
    table = Table.create(str(tmp_path / "t"), TableConfig(file_groups=2), SCHEMA, max_skew_ms=0)
    commit(table, opening_balances(SPEC))
    commit(table, legs(10, [(0, -5)]))  # the debit alone: the total moved
    commit(table, legs(11, [(1, 5)]))  # the credit later: the final snapshot looks fine
    result = check(table)
    assert result.verdict == "invalid"
    bad = result.evidence["bad_reads"]["items"]
    assert {r["read_kind"] for r in bad} >= {"as_of", "incremental"}
