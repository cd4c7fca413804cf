"""Storage faults through the engine's file-system hooks: latency, failed operations,
and torn (truncated) data files. The same schedule is installed in every process that
touches the table (driver, writer tasks, batch writers, readers); each hook decides by the
run clock whether its fault is active.

Evidence follows the effect: latency is recorded after an operation was held back,
an error when the operation is failed (a lost response when the storage is told to land
the put and then lose its response), a torn file once it was truncated on storage."""

from __future__ import annotations

import functools
import os
import posixpath
import threading
import time
from typing import Any

from engine.layout.file_names import parse_data_file
from engine.storage import ResponseLostError, Storage
from engine.timeline.active import TIMELINE_DIR
from harness.faults.evidence import FaultRecorder
from harness.faults.fired import FiredLog
from harness.faults.schedule import Occurrence, of_kind
from harness.history import HistoryWriter
from harness.run_clock import RunClock
from harness.scenario.faults import StorageError, StorageLatency, TornFile

# Scenario op names -> the engine's hook op names.
OPS = {"get": "read", "put": "put", "list": "list", "rename": "rename", "delete": "delete"}
DATA_SUFFIX = ".parquet"


class InjectedStorageError(OSError):
    """A storage operation failed because a `storage_error` fault said so."""


class StorageFaults(FaultRecorder):
    def __init__(
        self,
        occurrences: list[Occurrence[Any]],
        clock: RunClock,
        history: HistoryWriter,
        fired: FiredLog,
        base_latency_ms: float = 0.0,
        target: str | None = None,
    ) -> None:
        super().__init__(clock, history, fired)  # counted hits: across all processes
        self.latency = of_kind(occurrences, StorageLatency)
        self.errors = of_kind(occurrences, StorageError)
        self.torn = [o for o in of_kind(occurrences, TornFile) if o.target == target]
        self.base_latency_s = base_latency_ms / 1000.0
        self._slowed: set[str] = set()  # latency occurrences already recorded here
        self._lock = threading.Lock()

    def install(self, storage: Storage) -> Storage:
        storage.hooks.append(self._before)
        if self.torn:
            storage.after_write_hooks.append(functools.partial(self._after_write, storage))
        return storage

    def _take(self, o: Occurrence[StorageError] | Occurrence[TornFile]) -> bool:
        """Count one hit against a counted occurrence; False once its count is used up."""
        return self.fired.take(o.label, o.fault.count)

    def _before(self, op: str, path: str) -> None:
        elapsed = self.clock.elapsed()
        delay = self.base_latency_s
        slowing = []
        for o in self.latency:
            ops = o.fault.ops
            if o.active(elapsed) and (ops is None or op in {OPS[x] for x in ops}):
                delay += o.fault.latency_ms / 1000.0
                slowing.append(o)
        if delay:
            started = time.monotonic()
            time.sleep(delay)
            held_ms = (time.monotonic() - started) * 1000
            for o in slowing:
                self._record_latency_once(o, op, path, held_ms)
        for e in self.errors:
            chosen = OPS[e.fault.op] == op and _of_files(e.fault.files, path)
            if e.at_s <= elapsed and chosen and self._take(e):
                if e.fault.mode == "lost_response":  # the storage lands the put
                    self._record(e, op=op, path=path, pid=os.getpid(), mode="lost_response")
                    raise ResponseLostError(f"injected lost response: {op} {path}")
                self._record(e, op=op, path=path, pid=os.getpid())
                raise InjectedStorageError(f"injected storage error: {op} {path}")

    def _record_latency_once(
        self, o: Occurrence[StorageLatency], op: str, path: str, held_ms: float
    ) -> None:
        """After the first operation this process held back (the op then goes ahead)."""
        with self._lock:
            if o.label in self._slowed:
                return
            self._slowed.add(o.label)
        self._record(
            o,
            latency_ms=o.fault.latency_ms,
            first_op=op,
            path=path,
            held_ms=round(held_ms, 1),
            pid=os.getpid(),
        )

    def _after_write(self, storage: Storage, path: str) -> None:
        if not path.endswith(DATA_SUFFIX):
            return
        elapsed = self.clock.elapsed()
        for t in self.torn:
            if t.at_s <= elapsed and self._take(t):
                size, landed = _truncate(storage, path)
                self._record(t, path=path, size=size, truncated_to=landed, pid=os.getpid())


def _of_files(files: str, path: str) -> bool:
    """Is `path` (a full path) among the files a storage_error's `files` names?"""
    if files == "any":
        return True
    if files == "timeline":
        return f"/{TIMELINE_DIR}/" in path
    parsed = parse_data_file(posixpath.basename(path))
    return parsed is not None and parsed.kind == files


def _truncate(storage: Storage, path: str) -> tuple[int, int]:
    """Rewrite the file at `path` (a full path) with its first half, through the table's
    own file system (local or an object store); returns (size before, size on storage
    after), the latter read back, so the evidence is what really landed."""
    data = storage.raw_read(path)
    storage.raw_write(path, data[: len(data) // 2])
    return len(data), storage.filesystem.get_file_info(path).size
