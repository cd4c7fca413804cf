"""Helpers shared by the engine unit tests."""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from engine.config import Safety
from engine.table import Table


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


@dataclass
class Hold:
    """One hold of a table's lock: the storage operations the lock itself did to acquire
    and release it, and those done while it was held, as (op, path under the root)."""

    acquire: list[tuple[str, str]]
    held: list[tuple[str, str]]
    release: list[tuple[str, str]]
    held_ms: float


class HoldRecorder:
    """Counts storage operations per hold of `table`'s lock (through a storage hook, so
    the counts are exact, whatever the timing), and how long each hold lasted (from the
    acquire's return to the release's call). Only the holding thread's operations count:
    the lease's renewal thread writes whenever its interval comes round, which on a loaded
    machine can fall inside a hold."""

    def __init__(self, table: Table) -> None:
        self.holds: list[Hold] = []
        self._root = table.storage.root
        self._ops: list[tuple[str, str]] = []
        self._thread: int | None = None
        table.storage.hooks.append(self._record)
        lock = table.lock
        acquire, release = lock.acquire, lock.release
        state: dict[str, Any] = {}

        def timed_acquire(*args: Any, **kwargs: Any) -> None:
            self._ops, self._thread = [], threading.get_ident()
            acquire(*args, **kwargs)
            state["acquire"], self._ops = self._ops, []
            state["t0"] = time.perf_counter()

        def timed_release() -> None:
            held_ms = (time.perf_counter() - state["t0"]) * 1000
            held, self._ops = self._ops, []
            release()
            self.holds.append(Hold(state["acquire"], held, self._ops, held_ms))
            self._ops = []

        lock.acquire, lock.release = timed_acquire, timed_release

    def _record(self, op: str, path: str) -> None:
        if threading.get_ident() == self._thread:
            self._ops.append((op, self._rel(path)))

    def _rel(self, path: str) -> str:
        return path[len(self._root) + 1 :] if path.startswith(self._root) else path

    def clear(self) -> None:
        self.holds.clear()


def held_names(hold: Hold) -> list[tuple[str, str]]:
    """The held operations with instant times replaced by T and lock tokens by G (stable
    across runs)."""
    out = []
    for op, path in hold.held:
        path = re.sub(r"\d{17}", "T", path)
        out.append((op, re.sub(r"(\.fence/[^/]+)/[0-9a-f]{12}", r"\1/G", path)))
    return out
