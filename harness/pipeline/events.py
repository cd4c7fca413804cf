"""Deterministic source events: the rows for source offsets [start, end) of one partition.

A row's content depends only on (seed, offset), and its event time only on the offsets'
recorded times, so a micro-batch replayed after a restart is identical to the first try.
Each source partition produces the rows routed to it (like a keyed Kafka topic), so that
source partition p feeds writer task p without a shuffle.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pyarrow as pa

OPENING_BALANCE = 1_000
SCHEMA = pa.schema(
    [
        ("id", pa.int64()),  # the record key
        ("event_id", pa.int64()),  # unique per source event (= its offset)
        ("event_time", pa.float64()),  # epoch seconds when the event was due
        ("account", pa.int32()),  # bank mode: the account a leg moves money on
        ("amount", pa.int64()),  # bank mode: signed amount of the leg (or opening balance)
        ("payload", pa.binary()),
    ]
)
SPARK_SCHEMA = "id long, event_id long, event_time double, account int, amount long, payload binary"


@dataclass(frozen=True)
class EventSpec:
    mode: str  # append | upsert | bank
    seed: int
    partitions: int  # = writer tasks
    keys: int = 100_000
    accounts: int = 8
    payload_bytes: int = 100
    file_groups: int = 8

    def to_dict(self) -> dict:
        return asdict(self)


def _mix(values: np.ndarray, seed: int, salt: int) -> np.ndarray:
    """splitmix64 of (value, seed, salt): a stable, vectorised hash."""
    with np.errstate(over="ignore"):
        z = values.astype(np.uint64) + np.uint64((seed * 0x9E3779B97F4A7C15 + salt) % 2**64)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _payload(n: int, size: int, seed: int, stream: int) -> pa.Array:
    """`stream` >= 0 picks an independent, reproducible byte stream for one slice of rows."""
    data = np.random.default_rng([seed % 2**32, stream]).bytes(n * size) if n and size else b""
    offsets = (np.arange(n + 1, dtype=np.int32) * size).astype(np.int32)
    return pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def _event_times(
    offsets: np.ndarray, start: int, end: int, t_start: float, t_end: float
) -> np.ndarray:
    span = max(end - start, 1)
    return t_start + (t_end - t_start) * ((offsets - start + 1) / span)


def partition_of_keys(keys: np.ndarray, spec: EventSpec) -> np.ndarray:
    """Writer task that owns a key: the owner of the key's bucket file group."""
    from engine.layout.index import bucket_of_keys  # TODO(integration): move to top

    return bucket_of_keys(pa.array(keys, pa.int64()), spec.file_groups) % spec.partitions


def upsert_keys(offsets: np.ndarray, spec: EventSpec) -> np.ndarray:
    """Upsert mode: the key each source offset's event writes."""
    return (_mix(offsets, spec.seed, 0) % np.uint64(max(spec.keys, 1))).astype(np.int64)


def bank_legs(event_ids: np.ndarray, spec: EventSpec) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(from_account, to_account, amount) of each transfer; the legs' owners always differ."""
    w, per = spec.partitions, max(spec.accounts // spec.partitions, 1)
    h = [_mix(event_ids, spec.seed, salt).astype(np.int64) & 0x7FFFFFFF for salt in (1, 2, 3, 4)]
    w_from = h[0] % w
    w_to = (w_from + 1 + (h[1] % max(w - 1, 1))) % w if w > 1 else w_from
    src = w_from + w * (h[2] % per)
    dst = w_to + w * (h[3] % per)
    amount = 1 + (h[0] % 100)
    return src.astype(np.int32), dst.astype(np.int32), amount


def generate(
    spec: EventSpec, partition: int, start: int, end: int, t_start: float, t_end: float
) -> pa.RecordBatch:
    """Rows of source offsets [start, end) that belong to `partition`."""
    offsets = np.arange(start, end, dtype=np.int64)
    if spec.mode == "bank":
        return _bank_rows(spec, partition, offsets, start, end, t_start, t_end)
    if spec.mode == "append":
        keys = offsets
        mine = offsets % spec.partitions == partition
    else:  # upsert: keys are reused
        keys = upsert_keys(offsets, spec)
        mine = partition_of_keys(keys, spec) == partition
    offsets, keys = offsets[mine], keys[mine]
    n = len(offsets)
    return pa.RecordBatch.from_arrays(
        [
            pa.array(keys),
            pa.array(offsets),
            pa.array(_event_times(offsets, start, end, t_start, t_end)),
            pa.nulls(n, pa.int32()),
            pa.array(np.zeros(n, np.int64)),
            _payload(n, spec.payload_bytes, spec.seed, 1 + start * spec.partitions + partition),
        ],
        schema=SCHEMA,
    )


def _bank_rows(
    spec: EventSpec,
    partition: int,
    offsets: np.ndarray,
    start: int,
    end: int,
    t_start: float,
    t_end: float,
) -> pa.RecordBatch:
    """Each transfer is two legs with ids 2*event and 2*event+1, owned by different tasks."""
    src, dst, amount = bank_legs(offsets, spec)
    ids = np.concatenate([2 * offsets, 2 * offsets + 1])
    accounts = np.concatenate([src, dst])
    amounts = np.concatenate([-amount, amount])
    events = np.concatenate([offsets, offsets])
    mine = accounts % spec.partitions == partition
    ids, accounts, amounts, events = ids[mine], accounts[mine], amounts[mine], events[mine]
    n = len(ids)
    return pa.RecordBatch.from_arrays(
        [
            pa.array(ids),
            pa.array(events),
            pa.array(_event_times(events, start, end, t_start, t_end)),
            pa.array(accounts, pa.int32()),
            pa.array(amounts, pa.int64()),
            _payload(n, spec.payload_bytes, spec.seed, 1 + start * spec.partitions + partition),
        ],
        schema=SCHEMA,
    )


def opening_balances(spec: EventSpec) -> pa.Table:
    """Bank mode: one row per account (negative ids never collide with leg ids)."""
    accounts = np.arange(spec.accounts, dtype=np.int32)
    n = len(accounts)
    return pa.Table.from_arrays(
        [
            pa.array(-1 - accounts.astype(np.int64)),
            pa.array(np.full(n, -1, np.int64)),
            pa.array(np.zeros(n)),
            pa.array(accounts, pa.int32()),
            pa.array(np.full(n, OPENING_BALANCE, np.int64)),
            _payload(n, spec.payload_bytes, spec.seed, 0),
        ],
        schema=SCHEMA,
    )
