"""Source events are deterministic, partitioned without overlap, and bank legs balance."""

import numpy as np
import pyarrow as pa

from harness.pipeline.events import SCHEMA, EventSpec, generate, opening_balances


def _all_partitions(spec, start, end):
    return pa.Table.from_batches(
        [generate(spec, p, start, end, 100.0, 102.0) for p in range(spec.partitions)], SCHEMA
    )


def test_append_rows_cover_the_offsets_exactly_once():
    spec = EventSpec(mode="append", seed=1, partitions=3, payload_bytes=8)
    rows = _all_partitions(spec, 1000, 1500)
    assert sorted(rows.column("event_id").to_pylist()) == list(range(1000, 1500))
    assert rows.column("id").equals(rows.column("event_id"))


def test_replay_is_identical():
    spec = EventSpec(mode="append", seed=5, partitions=2, payload_bytes=32)
    first = generate(spec, 1, 0, 999, 1.0, 2.0)
    again = generate(spec, 1, 0, 999, 1.0, 2.0)
    assert first.equals(again)


def test_event_times_lie_inside_the_batch_window():
    spec = EventSpec(mode="append", seed=1, partitions=1, payload_bytes=0)
    times = generate(spec, 0, 0, 100, 50.0, 52.0).column("event_time").to_numpy()
    assert times.min() > 50.0 and times.max() == 52.0


def test_bank_legs_sum_to_zero_and_land_on_different_tasks():
    spec = EventSpec(mode="bank", seed=9, partitions=2, accounts=8, payload_bytes=0)
    per_task = [generate(spec, p, 0, 400, 0.0, 1.0) for p in range(2)]
    rows = pa.Table.from_batches(per_task, SCHEMA)
    assert rows.num_rows == 800
    assert int(np.sum(rows.column("amount").to_numpy())) == 0
    # Both legs of a transfer never sit in the same writer task.
    for batch in per_task:
        events = batch.column("event_id").to_numpy()
        assert len(np.unique(events)) == len(events)
    owners = rows.column("account").to_numpy() % 2
    by_event = {}
    for event, owner in zip(rows.column("event_id").to_pylist(), owners, strict=True):
        by_event.setdefault(event, set()).add(int(owner))
    assert all(len(o) == 2 for o in by_event.values())


def test_opening_balances_have_one_row_per_account():
    spec = EventSpec(mode="bank", seed=9, partitions=2, accounts=5)
    table = opening_balances(spec)
    assert table.column("account").to_pylist() == [0, 1, 2, 3, 4]
    assert all(i < 0 for i in table.column("id").to_pylist())
