"""The batch writers' rule of exactly_once: the table against the rows each transaction
recorded before its commit (harness/checks/batch_writes.py)."""

from __future__ import annotations

from harness.checks.batch_writes import batch_writes


def _rows(instant: str, keys: list[int], amount: int) -> dict:
    return {
        "writer": "batch_writer:0",
        "instant": instant,
        "keys": keys,
        "amounts": [amount] * len(keys),
    }


ROWS = [_rows("001", [-1, -2], 0), _rows("003", [-2, -3], 1), _rows("005", [-4], 2)]
COMMITS = [{"instant": "001", "completed": "002"}, {"instant": "003", "completed": "004"}]


def test_the_last_committed_amount_of_every_key_is_valid():
    bad, evidence = batch_writes(ROWS, COMMITS, {-1: 0, -2: 1, -3: 1})
    assert not bad
    assert evidence["transactions"] == {"certain": 2, "uncertain": 1} and evidence["keys"] == 3


def test_an_uncertain_transaction_may_have_landed_or_not():
    assert not batch_writes(ROWS, COMMITS, {-1: 0, -2: 1, -3: 1, -4: 2})[0]
    assert not batch_writes([*ROWS, _rows("007", [-1], 9)], COMMITS, {-1: 9, -2: 1, -3: 1})[0]


def test_a_lost_write_a_stale_amount_and_a_phantom_are_violations():
    bad, evidence = batch_writes(ROWS, COMMITS, {-1: 0, -3: 1})
    assert bad and evidence["lost"] == {"count": 1, "keys": [-2]}
    bad, evidence = batch_writes(ROWS, COMMITS, {-1: 0, -2: 0, -3: 1})  # the older write's
    assert bad and evidence["wrong_amount"]["rows"] == [
        {"key": -2, "amount": 0, "last_committed_amount": 1}
    ]
    bad, evidence = batch_writes(ROWS, COMMITS, {-1: 0, -2: 1, -3: 1, -9: 5})
    assert bad and evidence["phantom"] == {"count": 1, "keys": [-9]}


def test_the_order_is_the_completion_order_of_the_writers_own_record():
    crossed = [{"instant": "001", "completed": "006"}, {"instant": "003", "completed": "004"}]
    bad, evidence = batch_writes(ROWS, crossed, {-1: 0, -2: 0, -3: 1})
    assert not bad, evidence  # 001 completed last: its amount of key -2 stands
