"""What the coordinator's parts share (engine/stream/coordinator.py): its configuration,
its epoch, and the state its three threads touch under one lock (event buffers, the
instant cache, the creations and commits under way), with the steps more than one part
takes: registering an instant, and failing."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from engine.config import Safety
from engine.stream import table_port
from engine.stream.errors import StreamError
from engine.stream.recorder import Recorder, null_recorder
from engine.stream.state import CheckpointStateStore, EpochStore
from engine.stream.write_meta import BufferEntry, EventBuffers
from engine.table import Table

FaultHook = Callable[[str, dict[str, Any]], None]
READY, PENDING, ERROR, OK = "READY", "PENDING", "ERROR", "OK"


def _no_fault(point: str, info: dict[str, Any]) -> None:
    """Default fault hook: no fault."""


def effective_mode(mode: str, table_type: str, operation: str, safety: Safety) -> str:
    """The instant mode the coordinator really runs: COW upserts are forced to blocking
    (safety.cow_upsert_blocking), because in async mode the next batch's writers merge
    with the last COMMITTED base file and would overwrite the updates still in flight."""
    if safety.cow_upsert_blocking and table_type == "cow" and operation == "upsert":
        return "blocking"
    return mode


@dataclass(frozen=True)
class Created:
    """An instant creation's result: the instant, and how long it waited for commits."""

    instant: str
    blocked_ms: float


class CoordinatorState:
    """The base of Coordinator: its configuration and shared state."""

    def __init__(
        self,
        table: Table,
        *,
        parallelism: int,
        mode: str = "async",
        operation: str = "insert",
        safety: Safety | None = None,
        commit_ack_timeout_s: float = 60.0,
        recorder: Recorder = null_recorder,
        state_store: CheckpointStateStore | None = None,
        epoch_store: EpochStore | None = None,
        fault_hook: FaultHook = _no_fault,
        shared_wait: bool = False,
    ) -> None:
        if mode not in ("async", "blocking"):
            raise ValueError(f"mode must be 'async' or 'blocking', not {mode!r}")
        self.table = table
        self.parallelism = parallelism
        safety = safety or Safety()
        self.requested_mode = mode
        self.mode = effective_mode(mode, table.config.table_type, operation, safety)
        self.subsume_acks = safety.subsume_acks
        self.keep_state = safety.coordinator_state
        self.fencing = safety.fencing
        self.ordered_instants = safety.checkpoint_ordered_instants
        self.commit_ack_timeout_s = commit_ack_timeout_s
        self.recorder = recorder
        self.state_store = state_store
        self.epoch_store = epoch_store
        self.fault_hook = fault_hook
        self.shared_wait = shared_wait
        self._take_epoch(epoch_store)
        if self.mode != mode:
            recorder("instant_mode_forced", {"requested": mode, "mode": self.mode})
        self._share_state(parallelism)
        self._meta = ThreadPoolExecutor(1, thread_name_prefix="meta-event-handle")
        self._instant_exec = ThreadPoolExecutor(1, thread_name_prefix="instant-request")
        self._committer = ThreadPoolExecutor(1, thread_name_prefix="instant-commit")

    def _take_epoch(self, epoch_store: EpochStore | None) -> None:
        # A restarted coordinator takes a new epoch first: from here on, the old one
        # (a zombie, maybe only paused) fails its guard on every commit and rollback.
        self.epoch = epoch_store.advance() if epoch_store is not None else 0
        # The token every timeline write of this coordinator carries (engine/table/
        # fencing.py): after a successor took the epoch, no write of ours lands, wherever
        # we were paused (the epoch checks in instant_commits.py only fail faster).
        self._fence = self.epoch if self.fencing and epoch_store is not None else None
        if self._fence is not None:
            table_port.enter_epoch(self.table, self.epoch)

    def _share_state(self, parallelism: int) -> None:
        # Guarded by one lock; `_committed` wakes the waiters on a commit, failure or close.
        self._lock = threading.Lock()
        self._committed = threading.Condition(self._lock)
        self._buffers = EventBuffers(parallelism)
        self._instants: dict[int, str] = {}  # checkpoint id -> instant, answers late requests
        self._creating: dict[int, Future[Created]] = {}
        self._minting: set[int] = set()  # creations on the table now (past any wait)
        self._reserved: set[int] = set()  # checkpoint ids a commit is minting (shared wait)
        self._current_instant = ""
        self._last_ack = -1
        self._attempts: dict[tuple[int, int], int] = {}  # (task, ckp) -> newest attempt
        self._awaiting_bootstrap: set[int] = set()
        self._dispatched: set[int] = set()  # handed to the commit thread, not yet removed
        self._failure: BaseException | None = None
        self._closed = False  # close() wakes blocking-mode waiters, which then give up
        self._ignored_events = 0

    def _register(
        self, checkpoint_id: int, instant: str, timing: dict[str, Any], **fields: Any
    ) -> None:
        with self._lock:
            self._buffers.init_new(checkpoint_id, instant)
            self._instants[checkpoint_id] = instant
            self._current_instant = max(self._current_instant, instant)
            self._creating.pop(checkpoint_id, None)
        self.recorder(
            "instant_created",
            {
                "checkpoint_id": checkpoint_id,
                "instant": instant,
                "truetime_sleep_ms": timing.get("truetime_sleep_ms"),
                "lock_wait_ms": timing.get("lock_wait_ms"),
                **fields,
            },
        )

    def _fail(self, entry: BufferEntry, error: BaseException) -> BaseException:
        """Record the failure and stop the coordinator; the caller raises the result."""
        self.recorder(
            "commit_failed",
            {"instant": entry.instant, "checkpoint_id": entry.checkpoint_id, "error": str(error)},
        )
        with self._lock:
            self._failure = error
            self._committed.notify_all()
        return error

    def _raise_if_failed(self) -> None:
        if self._failure is not None:
            raise StreamError(f"coordinator failed: {self._failure}") from self._failure
