"""A Locust user that is a batch writer: upserts through the engine's OCC transactions.

Each user opens the table with its own writer id (and so its own lock holder), like a
separate backfill job. Every commit attempt is one Locust request named after the load
stage it ran in; an attempt during which the number of running users was not the stage's
is counted under `transition` (users that joined mid-attempt may conflict with it).
Success = committed, failure = a write conflict (the transaction is rolled back, not
retried, so the failure ratio is the conflict rate). Anything else is reported under the
request type `error`. A stage's first attempts may be forced rounds
(infra/locust/rendezvous.py): every user begins before any commits.
"""

from __future__ import annotations

import itertools
import random
import time
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from locust import User, constant, task

from engine.errors import WriteConflictError
from engine.storage import Storage
from engine.table import Table
from infra.locust.rendezvous import Rendezvous
from infra.locust.shape import stage_users

SCHEMA = pa.schema([("id", pa.int64()), ("amount", pa.int64()), ("payload", pa.binary())])
_ids = itertools.count()
TRANSITION = "transition"


@dataclass(frozen=True)
class WriterSettings:
    table_path: str
    rows_per_commit: int
    keys: int
    max_skew_ms: float
    storage_latency_ms: float
    seed: int


def records(rng: random.Random, rows: int, keys: int, payload: bytes) -> pa.Table:
    picks = np.array(rng.sample(range(keys), min(rows, keys)), np.int64)
    return pa.Table.from_arrays(
        [
            pa.array(picks),
            pa.array(np.arange(len(picks), dtype=np.int64)),
            pa.array([payload] * len(picks), pa.binary()),
        ],
        schema=SCHEMA,
    )


def _slowed(path: str, latency_ms: float) -> Storage:
    """The table's storage with the scenario's per-operation latency (an object store).

    All users share one OS thread (gevent); they overlap only where the engine waits
    (TrueTime, the lock, and this latency, which gevent turns into a yield), as writers on
    separate machines overlap while their storage calls are in flight."""
    storage = Storage(path)
    if latency_ms > 0:
        storage.hooks.append(lambda op, full_path: time.sleep(latency_ms / 1000))
    return storage


class OccWriter(User):
    abstract = True  # concrete subclasses set `settings`
    settings: WriterSettings
    rendezvous: Rendezvous = Rendezvous(forced_rounds=0)
    wait_time = constant(0)  # closed loop: commit again as soon as the last attempt ends

    def on_start(self) -> None:
        number = next(_ids)
        self.writer_id = f"locust:{number}"
        self.rng = random.Random(self.settings.seed * 7919 + number)
        self.attempts: Counter[str] = Counter()  # per stage
        self.table = Table.open(
            self.settings.table_path,
            storage=_slowed(self.settings.table_path, self.settings.storage_latency_ms),
            writer_id=self.writer_id,
            max_skew_ms=self.settings.max_skew_ms,
        )

    def on_stop(self) -> None:
        self.table.close()

    @task
    def commit(self) -> None:
        stage = self.environment.shape_class.label() if self.environment.shape_class else None
        if stage is None:  # the last stage is over; the runner is stopping
            return
        rows = records(self.rng, self.settings.rows_per_commit, self.settings.keys, b"x" * 16)
        forced = self.rendezvous.round_of(self.attempts[stage])
        self.attempts[stage] += 1
        if forced is not None:
            self.rendezvous.meet(stage, forced, "begin")
        users_at_start = self.environment.runner.user_count
        started = time.perf_counter()
        txn = self.table.reload().transaction(metadata={"writer": self.writer_id})
        request_type = "commit"
        exception: Exception | None = None
        try:
            txn.begin()
            txn.write(rows, op="upsert")
            if forced is not None:
                self.rendezvous.meet(stage, forced, "commit")
            txn.commit()
        except WriteConflictError as exc:
            exception = exc
            txn.abort()
        except Exception as exc:
            request_type, exception = "error", exc
            txn.abort()
        self.environment.events.request.fire(
            request_type=request_type,
            name=self._stage_name(stage, users_at_start),
            response_time=(time.perf_counter() - started) * 1000,
            response_length=rows.num_rows,
            exception=exception,
            context={"writer": self.writer_id},
        )
        if forced is not None:  # after its stage was named: the stage may end now
            self.rendezvous.finished(stage)

    def _stage_name(self, started_in: str, users_at_start: int) -> str:
        """The stage, if the attempt saw only that stage's users from start to end (the
        runner spawns a stage's users a little after the stage's clock starts)."""
        ended_in = self.environment.shape_class.label()
        if ended_in not in (None, started_in):
            return TRANSITION
        expected = stage_users(started_in)
        if users_at_start != expected or self.environment.runner.user_count != expected:
            return TRANSITION
        return started_in
