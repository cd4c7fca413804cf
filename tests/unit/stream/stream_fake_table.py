"""A file-based stand-in for engine.table, used until the real table lands.

Implements only what engine/stream/table_port.py calls, on the local file system so that
writer processes and the coordinator process share it.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from engine.errors import InstantRolledBackError, InstantStateError, RollbackError


@dataclass
class WriteStat:
    path: str
    rows: int
    errors: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> WriteStat:
        return cls(**d)


class Table:
    def __init__(self, path: str) -> None:
        self.path = path
        self.tl = os.path.join(path, ".hoodie", "timeline")
        self.data = os.path.join(path, "data")
        os.makedirs(self.tl, exist_ok=True)
        os.makedirs(self.data, exist_ok=True)
        self.last_instant_timing: dict[str, float] = {}

    @classmethod
    def create(cls, path: str) -> Table:
        return cls(path)

    @classmethod
    def open(cls, path: str) -> Table:
        return cls(path)

    @contextmanager
    def _locked(self):
        with open(os.path.join(self.path, ".hoodie", "lock"), "w") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def _entries(self) -> dict[str, str]:
        out = {}
        for name in os.listdir(self.tl):
            inst, state = name.split(".")
            out[inst] = state
        return out

    def _now(self) -> str:
        existing = [int(i) for i in self._entries()]
        ms = int(time.time() * 1000)
        t = datetime.fromtimestamp(ms / 1000, UTC)
        candidate = int(t.strftime("%Y%m%d%H%M%S") + f"{ms % 1000:03d}")
        return str(max([candidate, *(e + 1 for e in existing)]))

    def start_instant(self, action: str, metadata: dict[str, Any]) -> str:
        with self._locked():
            inst = self._now()
            self._put(inst, "inflight", {"metadata": metadata})
        self.last_instant_timing = {"truetime_sleep_ms": 0.0, "lock_wait_ms": 0.0}
        return inst

    def _put(self, inst: str, state: str, payload: dict[str, Any]) -> None:
        with open(os.path.join(self.tl, f"{inst}.{state}"), "w") as f:
            json.dump(payload, f)

    def _get(self, inst: str, state: str) -> dict[str, Any]:
        with open(os.path.join(self.tl, f"{inst}.{state}")) as f:
            return json.load(f)

    def write_files(
        self, instant: str, records: pa.Table, op: str, write_token: str, prior: list[WriteStat]
    ) -> list[WriteStat]:
        path = os.path.join(self.data, f"{instant}-{write_token}.parquet")
        pq.write_table(records, path)
        return [WriteStat(path=path, rows=records.num_rows)]

    def commit(
        self, instant: str, stats: list[WriteStat], metadata: dict[str, Any], guard=None
    ) -> str:
        with self._locked():
            state = self._entries().get(instant)
            if state != "inflight":
                if state == "rolledback":
                    raise InstantRolledBackError(instant)
                raise InstantStateError(f"cannot commit {instant}: it is {state}")
            if guard is not None:
                guard()
            completion = self._now()
            payload = self._get(instant, "inflight")
            payload.update(
                completion=completion, files=[s.path for s in stats], commit_metadata=metadata
            )
            self._put(instant, "completed", payload)
            os.remove(os.path.join(self.tl, f"{instant}.inflight"))
        return completion

    def rollback(self, instant: str) -> None:
        with self._locked():
            if self._entries().get(instant) != "inflight":
                raise RollbackError(f"cannot roll back {instant}")
            payload = self._get(instant, "inflight")
            self._put(instant, "rolledback", payload)
            os.remove(os.path.join(self.tl, f"{instant}.inflight"))

    def instant_state(self, instant: str) -> str:
        state = self._entries().get(instant)
        return {
            "inflight": "pending",
            "completed": "completed",
            "rolledback": "rolled_back",
            None: "missing",
        }[state]

    def pending_instants(self) -> list[tuple[str, dict[str, Any]]]:
        return [
            (inst, self._get(inst, "inflight")["metadata"])
            for inst, state in sorted(self._entries().items())
            if state == "inflight"
        ]

    def completed(self) -> list[str]:
        return sorted(i for i, s in self._entries().items() if s == "completed")

    def snapshot(self) -> pa.Table:
        files = [f for inst in self.completed() for f in self._get(inst, "completed")["files"]]
        if not files:
            return pa.table({"id": pa.array([], pa.int64())})
        return pa.concat_tables(pq.read_table(f) for f in files)
