"""Independent OCC writers beside the stream (a backfill, a fix-up job).

Each commits through the engine's transactions and retries on a write conflict. Their keys
are negative, so they never overwrite a stream row (the exactly-once check reads those).
"""

from __future__ import annotations

import itertools
import random
import threading
import time

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.clock import AdjustableClock, SystemClock
from engine.config import Safety
from engine.errors import DuplicateKeyError, WriteConflictError
from engine.locks.registry import LockSpec
from engine.table import Table
from harness.history import HistoryWriter
from harness.pipeline.events import SCHEMA

# Batch-writer keys: -(KEY_BASE + k), far from the bank's account rows (-1 - account).
KEY_BASE = 1_000_000_000
MAX_ATTEMPTS = 5


def writer_seed(seed: int, index: int) -> int:
    """Batch writer `index`'s random seed: its own stream of the scenario's seed, whatever
    system it writes."""
    return seed * 7919 + index


# How long an insert waits for the other writers' matching insert before committing alone.
RACE_WAIT_S = 5.0


class InsertRace:
    """One key space for every batch writer's inserts, written in lock-step: writer i's n-th
    commit inserts the same keys as writer j's n-th, and each waits until all have written
    their files before committing. That is a backfill run twice at once: the inserts race
    every time, rather than only when the writers' timing happens to line up."""

    def __init__(self, writers: int, rows_per_commit: int, wait_s: float = RACE_WAIT_S) -> None:
        self.rows = rows_per_commit
        self.barrier = threading.Barrier(writers)
        self.wait_s = wait_s

    def keys(self, commit_number: int) -> np.ndarray:
        start = commit_number * self.rows
        return -(KEY_BASE + np.arange(start, start + self.rows, dtype=np.int64))

    def written(self) -> None:
        """Wait (bounded) until every writer has written its files for this commit."""
        try:
            self.barrier.wait(self.wait_s)
        except threading.BrokenBarrierError:
            # A writer stopped or failed before writing; the rest commit alone this time.
            self.barrier.reset()

    def release(self) -> None:
        self.barrier.abort()


def _rows(ids: np.ndarray, accounts: np.ndarray | None, amounts: np.ndarray) -> pa.Table:
    n = len(ids)
    return pa.Table.from_arrays(
        [
            pa.array(ids, pa.int64()),
            pa.array(np.full(n, -1, np.int64)),
            pa.array(np.full(n, time.time())),
            pa.array(accounts, pa.int32()) if accounts is not None else pa.nulls(n, pa.int32()),
            pa.array(amounts, pa.int64()),
            pa.array([b""] * n, pa.binary()),
        ],
        schema=SCHEMA,
    )


class BatchWriterThread(threading.Thread):
    def __init__(
        self,
        writer_id: int,
        table_path: str,
        op: str,
        every_s: float,
        rows_per_commit: int,
        keys: int,
        accounts: int,
        safety: Safety,
        max_skew_ms: int,
        history: HistoryWriter,
        seed: int,
        race: InsertRace,
        lock_spec: LockSpec | None = None,
    ) -> None:
        super().__init__(name=f"batch-writer-{writer_id}", daemon=True)
        self.name_ = f"batch_writer:{writer_id}"
        self.clock = AdjustableClock(SystemClock())  # skewable by clock_skew faults
        self.table = Table.open(
            table_path,
            clock=self.clock,
            safety=safety,
            max_skew_ms=max_skew_ms,
            writer_id=self.name_,
            lock_spec=lock_spec,
        )
        self.op, self.every_s, self.rows = op, every_s, rows_per_commit
        self.keys, self.accounts = keys, accounts
        self.history = history
        self.rng = random.Random(writer_seed(seed, writer_id))
        self.race = race
        self.stop_event = threading.Event()
        self._commits = itertools.count()

    def _records(self, table: Table, commit_number: int) -> pa.Table:
        if self.op == "insert":
            ids = self.race.keys(commit_number)
            return _rows(ids, None, np.arange(len(ids), dtype=np.int64))
        if self.op == "upsert":
            picks = np.array(self.rng.sample(range(self.keys), min(self.rows, self.keys)))
            ids = -(KEY_BASE + picks.astype(np.int64))
            return _rows(ids, None, np.full(len(ids), commit_number, np.int64))
        # transfer: read-modify-write of two account balances
        a, b = self.rng.sample(range(self.accounts), 2)
        amount = self.rng.randint(1, 50)
        ids = np.array([-1 - a, -1 - b], np.int64)
        current = table.snapshot(columns=["id", "amount"])
        mine = current.filter(pc.is_in(current.column("id"), pa.array(ids)))
        if mine.num_rows != 2:
            raise RuntimeError(f"accounts {a} and {b} are not both readable")
        balances = dict(
            zip(mine.column("id").to_pylist(), mine.column("amount").to_pylist(), strict=True)
        )
        new = np.array([balances[-1 - a] - amount, balances[-1 - b] + amount], np.int64)
        return _rows(ids, np.array([a, b], np.int32), new)

    def commit_once(self) -> None:
        commit_number = next(self._commits)
        started = time.time()
        outcome, error, instant, attempts = "error", None, None, 0
        while attempts < MAX_ATTEMPTS:
            attempts += 1
            txn = self.table.reload().transaction(metadata={"writer": self.name_, "op": self.op})
            try:
                instant = txn.begin().requested_time
                self.history.record(
                    "instant_created",
                    instant=instant,
                    writer=self.name_,
                    truetime_sleep_ms=self.table.last_instant_timing.truetime_sleep_ms,
                    lock_wait_ms=self.table.last_instant_timing.lock_wait_ms,
                )
                # Every op writes as an upsert: an `insert` draws keys that should be new, but
                # if another writer's commit already made one visible it must update that row
                # (a plain insert duplicates it by design, as in Hudi). Only inserts that race
                # each other can then put one key in two file groups: what pk_check prevents.
                records = self._records(self.table, commit_number)
                txn.write(records, op="upsert")
                if self.op == "insert" and attempts == 1:
                    self.race.written()
                if self.op != "transfer":  # the ground truth, before the commit can land
                    self.history.record(
                        "txn_rows",
                        writer=self.name_,
                        instant=instant,
                        keys=records.column("id").to_pylist(),
                        amounts=records.column("amount").to_pylist(),
                    )
                completed = txn.commit()
                outcome = "ok"
                self.history.record(
                    "txn_commit", instant=instant, completed=completed, writer=self.name_
                )
                break
            except WriteConflictError as exc:
                txn.abort()
                outcome, error = "conflict", str(exc)
            except DuplicateKeyError as exc:
                txn.abort()
                outcome, error = "conflict", str(exc)
                break  # inserting the same key again cannot succeed
        self.history.record(
            "txn",
            writer=self.name_,
            op=self.op,
            instant=instant,
            outcome=outcome,
            attempts=attempts,
            latency_ms=(time.time() - started) * 1000,
            rows=self.rows,
            error=error,
        )

    def run(self) -> None:
        while not self.stop_event.wait(self.every_s):
            try:
                self.commit_once()
            except Exception as exc:
                self.history.record(
                    "txn",
                    writer=self.name_,
                    op=self.op,
                    outcome="error",
                    error=f"{type(exc).__name__}: {exc}",
                )

    def stop(self) -> None:
        self.stop_event.set()
        self.race.release()
        self.join()
        self.table.close()
