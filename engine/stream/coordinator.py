"""The stream write coordinator (lives in the driver; Hudi's StreamWriteOperatorCoordinator).

Single-thread executors, as in Hudi 1.1:
* "meta-event-handle": events, snapshots, ACKs and recovery, strictly in arrival order,
  so an ACK is always handled after every event that was accepted before it;
* "instant-request": instant creation, so a blocking-mode wait for earlier commits never
  stalls the commits it waits for;
* "instant-commit" (not in Hudi): the commits an ACK triggers, serially and ascending, so
  a hanging commit does not hold up the next checkpoint's snapshot in async mode.
Shared state (event buffers, instant cache) is guarded by one lock.

Shared wait (opt-in, `shared_wait=True`; not in Hudi): the last commit an ACK triggers also
mints the instant that would be created right after it (blocking: the one the next batch
is waiting for; async: the one after the next batch's), in the same lock hold and the
same TrueTime wait (engine/truetime.py). A creation for that checkpoint id then waits for
the commit and takes its instant instead of holding the lock through a wait of its own.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any

from engine.config import Safety
from engine.stream import table_port
from engine.stream.errors import (
    CommitFailedError,
    FencedError,
    InstantTimeoutError,
    RecoveryError,
    StreamError,
    UnexpectedEventError,
)
from engine.stream.recorder import Recorder, null_recorder
from engine.stream.state import CheckpointStateStore, EpochStore
from engine.stream.write_meta import BufferEntry, EventBuffers, WriteMetaEvent
from engine.table import Table

FaultHook = Callable[[str, dict[str, Any]], None]
READY, PENDING, ERROR, OK = "READY", "PENDING", "ERROR", "OK"


def _no_fault(point: str, info: dict[str, Any]) -> None:
    """Default fault hook: no fault."""


def _settle(target: Future[Any], source: Future[Any]) -> None:
    error = source.exception()
    if error is None:
        target.set_result(source.result())
    else:
        target.set_exception(error)


def effective_mode(mode: str, table_type: str, operation: str, safety: Safety) -> str:
    """The instant mode the coordinator really runs: COW upserts are forced to blocking
    (safety.cow_upsert_blocking), because in async mode the next batch's writers merge
    with the last COMMITTED base file and would overwrite the updates still in flight."""
    if safety.cow_upsert_blocking and table_type == "cow" and operation == "upsert":
        return "blocking"
    return mode


@dataclass(frozen=True)
class _Created:
    instant: str
    blocked_ms: float


class Coordinator:
    """Creates one instant per checkpoint, buffers WriteMeta, commits on checkpoint ACKs.

    Driver calls: ``restore(c)`` once after a restart (c = last batch Spark committed),
    ``snapshot(b)`` before the writers of batch b start, ``notify_checkpoint_complete(b)``
    after Spark durably recorded batch b, ``close()`` at the end. Writers reach
    ``request_instant`` and ``handle_event`` through a transport.
    """

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
        # A restarted coordinator takes a new epoch first: from here on, the old one
        # (a zombie, maybe only paused) fails its guard on every commit and rollback.
        self.epoch = epoch_store.advance() if epoch_store is not None else 0
        # The token every timeline write of this coordinator carries (engine/table/
        # fencing.py): after a successor took the epoch, no write of ours lands, wherever
        # we were paused (the epoch checks below only fail faster).
        self._fence = self.epoch if self.fencing and epoch_store is not None else None
        if self._fence is not None:
            table_port.enter_epoch(table, self.epoch)
        if self.mode != mode:
            recorder("instant_mode_forced", {"requested": mode, "mode": self.mode})

        self._lock = threading.Lock()
        self._committed = threading.Condition(self._lock)
        self._buffers = EventBuffers(parallelism)
        self._instants: dict[int, str] = {}  # checkpoint id -> instant, answers late requests
        self._creating: dict[int, Future[_Created]] = {}
        self._minting: set[int] = set()  # creations on the table now (past any wait)
        self._reserved: set[int] = set()  # checkpoint ids a commit is minting (shared wait)
        self._current_instant = ""
        self._last_ack = -1
        self._ack_times: dict[int, float] = {}
        self._attempts: dict[tuple[int, int], int] = {}  # (task, ckp) -> newest attempt
        self._awaiting_bootstrap: set[int] = set()
        self._dispatched: set[int] = set()  # handed to the commit thread, not yet removed
        self._failure: BaseException | None = None
        self._closed = False  # close() wakes blocking-mode waiters, which then give up
        self._ignored_events = 0
        self._meta = ThreadPoolExecutor(1, thread_name_prefix="meta-event-handle")
        self._instant_exec = ThreadPoolExecutor(1, thread_name_prefix="instant-request")
        self._committer = ThreadPoolExecutor(1, thread_name_prefix="instant-commit")

    # ------------------------------------------------------------------ instant requests
    def request_instant(
        self, checkpoint_id: int, task_id: int = -1, wait_s: float = 1.0
    ) -> dict[str, Any]:
        """Answer READY with the instant for this checkpoint, or PENDING if it is not made
        within ``wait_s`` (the caller polls again), or ERROR. Never blocks longer."""
        with self._lock:
            if self._failure is not None:
                return {"status": ERROR, "error": f"coordinator failed: {self._failure}"}
            instant = self._instants.get(checkpoint_id)
            if instant is not None:
                return {"status": READY, "instant": instant, "created": False, "blocked_ms": 0.0}
            if checkpoint_id < self._last_ack:
                return {
                    "status": ERROR,
                    "error": f"checkpoint {checkpoint_id} is older than the last completed "
                    f"checkpoint {self._last_ack}: a stale writer",
                }
            future = self._creating.get(checkpoint_id)
            created = future is None
            if future is None:  # at most one creation per checkpoint id (Hudi #19902)
                future = self._submit_in_order(checkpoint_id)
        try:
            result = future.result(timeout=wait_s)
        except FutureTimeout:
            return {"status": PENDING, "created": created}
        except Exception as e:
            with self._lock:  # reported once: the next request tries again
                if self._creating.get(checkpoint_id) is future:
                    del self._creating[checkpoint_id]
            return {"status": ERROR, "error": str(e), "created": created}
        return {
            "status": READY,
            "instant": result.instant,
            "created": created,
            "blocked_ms": result.blocked_ms,
        }

    def _submit_in_order(self, checkpoint_id: int) -> Future[_Created]:
        """Submit the creation of `checkpoint_id` (call under _lock), after one for each
        earlier checkpoint that has neither an instant nor a creation under way
        (safety.checkpoint_ordered_instants). The instant thread runs them in the order
        submitted, so requested times ascend with checkpoint ids: readers merge a slice's
        logs in requested-time order (Hudi's log file comparator), and an instant requested
        before an earlier checkpoint's would let that checkpoint's older rows win once both
        commit (in checkpoint order), whatever order the requests came in."""
        for earlier in self._unminted_before(checkpoint_id):
            pending = self._creating.get(earlier)
            if pending is None or (pending.done() and pending.exception() is not None):
                self._creating[earlier] = self._instant_exec.submit(
                    self._create_instant, earlier, checkpoint_id
                )
        future = self._instant_exec.submit(self._create_instant, checkpoint_id)
        self._creating[checkpoint_id] = future
        return future

    def _unminted_before(self, checkpoint_id: int) -> list[int]:
        """The earlier checkpoints without an instant that can still ask for one: every id
        from the last ACK on (a request below it is refused as stale; there is one id per
        batch). Call under _lock. Empty with safety.checkpoint_ordered_instants off."""
        if not self.ordered_instants:
            return []
        return [c for c in range(self._last_ack, checkpoint_id) if c not in self._instants]

    def _create_instant(self, checkpoint_id: int, ahead_of: int | None = None) -> _Created:
        # A failed creation stays in _creating until a request reports it (request_instant
        # drops it then): a writer polling between two asks (PENDING, backoff) would
        # otherwise never see the error and start the next creation, until its deadline.
        blocked_ms = self._wait_for_earlier_commits(checkpoint_id)
        with self._lock:
            while checkpoint_id in self._reserved:  # a commit is minting it (shared wait)
                self._committed.wait()
            minted = self._instants.get(checkpoint_id)
            if minted is not None:
                self._creating.pop(checkpoint_id, None)
                return _Created(minted, blocked_ms)
            if missing := self._unminted_before(checkpoint_id):
                # Their creation (submitted first) failed: a later request submits them
                # again, first. Its error is the cause, named here for this one's requester.
                earlier = self._creating.get(missing[0])
                cause = earlier.exception() if earlier is not None and earlier.done() else None
                raise StreamError(
                    f"no instant for checkpoint {checkpoint_id} before checkpoints {missing} "
                    f"have theirs (instants follow checkpoint order): {cause}"
                )
            self._minting.add(checkpoint_id)
        try:
            instant, timing = table_port.start_instant(
                self.table, checkpoint_id, self.epoch, self._fence
            )
        finally:
            with self._lock:
                self._minting.discard(checkpoint_id)
        ahead = {} if ahead_of is None else {"minted_ahead_of": ahead_of}
        self._register(checkpoint_id, instant, timing, **ahead)
        return _Created(instant, blocked_ms)

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

    def _reserve_next(self, ack_id: int) -> int | None:
        """Shared wait: the checkpoint id whose instant the commits of ACK `ack_id` mint,
        reserved, or None. It is the one after every instant made, and at most ack_id + 1:
        the instant the next batch (blocking) or the one after it (async) will ask for.
        None while a creation is on the table: its time and ours could come in either
        order, and requested times must ascend with checkpoint ids."""
        with self._lock:
            if self._failure is not None or self._minting:
                return None
            target = max([ack_id - 1, *self._instants]) + 1
            if target > ack_id + 1:
                return None
            self._reserved.add(target)
            return target

    def _settle_reservation(
        self, checkpoint_id: int, started: tuple[str, dict[str, Any]] | None, by: str
    ) -> None:
        """Register what the commit minted (if it did), then free waiting creations."""
        try:
            if started is not None:
                self._register(checkpoint_id, *started, minted_by_commit=by)
        finally:
            with self._lock:
                self._reserved.discard(checkpoint_id)
                self._committed.notify_all()

    def _wait_for_earlier_commits(self, checkpoint_id: int) -> float:
        """Blocking mode (Hudi's CommitGuard): wait until no earlier instant is pending."""
        if self.mode != "blocking":
            return 0.0
        start = time.monotonic()
        deadline = start + self.commit_ack_timeout_s
        with self._lock:
            while pending := [e.instant for e in self._buffers.entries_before(checkpoint_id)]:
                if self._failure is not None:
                    raise StreamError(f"coordinator failed: {self._failure}")
                if self._closed:
                    raise StreamError(f"coordinator closed while instants {pending} were pending")
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise InstantTimeoutError(
                        f"Timeout while waiting for instants {pending} to commit "
                        f"(commit_ack_timeout_s={self.commit_ack_timeout_s})"
                    )
                self._committed.wait(remaining)
        return (time.monotonic() - start) * 1000

    # ------------------------------------------------------------------ events
    def handle_event(self, event: WriteMetaEvent) -> dict[str, Any]:
        """Accept (validate and queue) a writer event; merging happens on the meta thread,
        after every event accepted before it and before any ACK that comes after."""
        with self._lock:
            if self._failure is not None:
                return {"status": ERROR, "error": f"coordinator failed: {self._failure}"}
            # Bootstrap events carry saved state of older checkpoints: the buffer lookup
            # on the meta thread decides what they still mean.
            if not event.bootstrap and event.instant > self._current_instant:
                err = UnexpectedEventError(
                    f"Receive an unexpected event for instant {event.instant} from task "
                    f"{event.task_id}: the coordinator's current instant is "
                    f"{self._current_instant or 'none'}"
                )
                return {"status": ERROR, "error": str(err)}
        self._meta.submit(self._apply_event, event)
        return {"status": OK}

    def _apply_event(self, event: WriteMetaEvent) -> None:
        key = (event.task_id, event.checkpoint_id)
        commit_now: BufferEntry | None = None
        with self._lock:
            if event.is_empty_bootstrap:
                # Task-only failover: the retried task rewrites everything from its
                # checkpoint on, so what earlier attempts reported is void.
                self._attempts[key] = max(self._attempts.get(key, 0), event.attempt)
                self._buffers.clear_task_from(event.task_id, event.checkpoint_id)
                return
            entry = self._buffers.get(event.checkpoint_id)
            stale_attempt = not event.bootstrap and event.attempt < self._attempts.get(key, 0)
            if entry is None or entry.instant != event.instant or stale_attempt:
                # Already committed (a bootstrap re-send), rolled back at recovery, or from
                # a superseded attempt: its files are orphans that no commit references.
                self._ignored_events += 1
                return
            entry.buffer.add(event)
            if event.checkpoint_id in self._awaiting_bootstrap and entry.buffer.is_ready():
                self._awaiting_bootstrap.discard(event.checkpoint_id)
                commit_now = entry
        if commit_now is not None:
            # Restored writers re-sent a batch Spark had already committed: commit it now
            # rather than at the next ACK, which blocking mode would never reach.
            self._dispatch([commit_now], time.monotonic())

    # ------------------------------------------------------------------ checkpoints
    def snapshot(self, checkpoint_id: int, timeout_s: float | None = None) -> dict[str, Any]:
        """Persist fully reported entries before the writers of ``checkpoint_id`` start."""
        return self.snapshot_async(checkpoint_id).result(timeout=timeout_s)

    def snapshot_async(self, checkpoint_id: int) -> Future[dict[str, Any]]:
        """Queue the snapshot without waiting for it. It runs on the meta thread after the
        commits queued before it and before any event of writers started afterwards, so the
        writers need not wait for earlier commits (Flink's coordinator checkpoint is
        asynchronous too); the checkpoint is durable once the future is done."""
        return self._meta.submit(self._snapshot, checkpoint_id)

    def _snapshot(self, checkpoint_id: int) -> dict[str, Any]:
        self._raise_if_failed()
        with self._lock:
            entries = self._buffers.ready_to_dict() if self.keep_state else []
        size = 0
        if self.state_store is not None and self.keep_state:
            payload = {"checkpoint_id": checkpoint_id, "epoch": self.epoch, "entries": entries}
            size = self.state_store.save(checkpoint_id, payload)
        self.fault_hook("after_coordinator_snapshot", {"checkpoint_id": checkpoint_id})
        return {"checkpoint_id": checkpoint_id, "entries": len(entries), "bytes": size}

    def notify_checkpoint_complete(self, checkpoint_id: int) -> Future[list[str] | None]:
        """ACK: checkpoint ``checkpoint_id`` is durable. Commits asynchronously; the
        returned future is done when the commits are, and fails if one failed (the
        coordinator then stays failed). Its result says what the ACK did: the instants it
        committed, or None for a stale ACK (at or below the last one), which is a no-op."""
        received = time.monotonic()
        done: Future[list[str] | None] = Future()

        def on_ack() -> None:
            try:
                commits = self._on_ack(checkpoint_id, received)
            except BaseException as e:
                done.set_exception(e)
                return
            if commits is None:
                done.set_result(None)
            else:
                commits.add_done_callback(lambda f: _settle(done, f))

        self._meta.submit(on_ack)
        return done

    def notify_checkpoint_aborted(self, checkpoint_id: int) -> None:
        """Nothing to discard: the next completed checkpoint subsumes this one."""

    def _on_ack(self, checkpoint_id: int, received: float) -> Future[list[str]] | None:
        self._raise_if_failed()
        with self._lock:
            stale = checkpoint_id <= self._last_ack
            if not stale:
                self._last_ack = checkpoint_id
                entries = self._covered_by(checkpoint_id)
        action = "stale_replay" if stale else "delivered"
        self.recorder("ack", {"checkpoint_id": checkpoint_id, "action": action})
        if stale:
            return None
        return self._dispatch(entries, received, checkpoint_id)

    def _covered_by(self, checkpoint_id: int) -> list[BufferEntry]:
        """The buffered instants an ACK of `checkpoint_id` commits (call under _lock)."""
        if self.subsume_acks:
            return self._buffers.entries_before(checkpoint_id)
        # Without subsuming, an ACK only covers its own interval: the instant of a dropped
        # ACK stays pending forever (and is lost on recovery).
        only = self._buffers.get(checkpoint_id - 1)
        return [only] if only is not None else []

    def _dispatch(
        self, entries: list[BufferEntry], ack_time: float, ack_id: int | None = None
    ) -> Future[list[str]]:
        """Hand entries to the commit thread. Commits run there, serially and in order,
        so a slow commit never holds up events or the next snapshot (async mode's point:
        batch n+1 proceeds while batch n commits)."""
        with self._lock:
            entries = [e for e in entries if e.checkpoint_id not in self._dispatched]
            self._dispatched.update(e.checkpoint_id for e in entries)
        return self._committer.submit(self._commit_entries, entries, ack_time, ack_id)

    def _commit_entries(
        self, entries: list[BufferEntry], ack_time: float, ack_id: int | None = None
    ) -> list[str]:
        """Commit `entries` in order; returns the instants committed. A failed coordinator
        commits nothing more: commits queued behind the failing one would otherwise land."""
        self._raise_if_failed()
        committed: list[str] = []
        if ack_id is not None:
            self.fault_hook("after_ack_before_commit", {"checkpoint_id": ack_id})
        for i, entry in enumerate(entries):
            buf = entry.buffer
            if not buf.is_ready():
                with self._lock:  # a later ACK may try these again
                    self._dispatched.difference_update(e.checkpoint_id for e in entries[i:])
                missing = [i for i, e in enumerate(buf.slots) if e is None or not e.last_batch]
                self.recorder(
                    "commit_failed",
                    {
                        "instant": entry.instant,
                        "checkpoint_id": entry.checkpoint_id,
                        "error": f"not committed yet: tasks {missing} have not reported",
                    },
                )
                return committed  # later instants must not complete before this one
            if buf.is_empty():
                # Nothing to publish: leave it inflight without a heartbeat; recovery or
                # the table's lazy failed-write cleaning rolls it back.
                table_port.release(self.table, entry.instant)
                self._remove(entry)
                continue
            # The shared wait: the ACK's last commit also mints the next checkpoint's instant.
            next_ckp = None
            if self.shared_wait and i == len(entries) - 1 and ack_id is not None:
                next_ckp = self._reserve_next(ack_id)
            self._commit(entry, ack_time, next_ckp)
            committed.append(entry.instant)
        return committed

    def _commit(self, entry: BufferEntry, ack_time: float, next_ckp: int | None = None) -> str:
        """Commit `entry`; with `next_ckp` (reserved) also mint that checkpoint's instant."""
        stats = entry.buffer.write_stats()
        meta = entry.buffer.metadata()
        info = {"instant": entry.instant, "checkpoint_id": entry.checkpoint_id}
        metadata = {table_port.STREAM_TAG: entry.checkpoint_id, "epoch": self.epoch}
        guard = self._guard_for(info)
        started = None
        try:
            if next_ckp is None:
                completed = table_port.commit(
                    self.table, entry.instant, stats, metadata, guard, self._fence
                )
            else:
                completed, started = table_port.commit_and_start(
                    self.table,
                    entry.instant,
                    stats,
                    metadata,
                    guard,
                    next_ckp,
                    self.epoch,
                    self._fence,
                )
        except table_port.PERMANENT_COMMIT_ERRORS as e:
            # Torn or missing files, a write conflict, a duplicate key: this instant can
            # never commit. Roll it back and stop loudly (Hudi: failed write statuses).
            self._rollback(entry.instant, f"commit failed: {e}")
            self._remove(entry)
            raise self._fail(entry, CommitFailedError(str(e))) from e
        except Exception as e:
            # Fencing, storage errors: no rollback. The instant stays inflight and its
            # WriteMeta in the coordinator and writer state, so recovery recommits it;
            # rolling back would lose a batch Spark already counts as done.
            raise self._fail(entry, e) from e
        finally:
            if next_ckp is not None:
                self._settle_reservation(next_ckp, started, entry.instant)
        self._remove(entry)
        self.recorder(
            "commit",
            {
                **info,
                "requested": entry.instant,
                "completed": completed,
                "rows": meta.get("rows", 0),
                "files": len(stats),
                "latency_ms": (time.monotonic() - ack_time) * 1000,
                "max_event_time": meta.get("max_event_time"),
                "min_offset": meta.get("min_offset"),
                "max_offset": meta.get("max_offset"),
            },
        )
        self.fault_hook("after_commit", info)
        return completed

    def _guard_for(self, info: dict[str, Any]) -> Callable[[], None]:
        def guard() -> None:
            # Called by the table under its lock right before the completed file is written.
            self.fault_hook("mid_commit", info)
            self._check_epoch()
            self.fault_hook("after_fencing_check", info)

        return guard

    def _check_epoch(self) -> None:
        if not self.fencing or self.epoch_store is None:
            return
        newest = self.epoch_store.current()
        if newest > self.epoch:
            raise FencedError(
                f"coordinator epoch {self.epoch} is fenced: epoch {newest} has taken over"
            )

    def _rollback(self, instant: str, reason: str) -> None:
        self._check_epoch()  # fails early; the fence token makes the rollback itself safe
        table_port.rollback(self.table, instant, self._fence)
        self.recorder("rollback", {"instant": instant, "reason": reason})

    def _remove(self, entry: BufferEntry) -> None:
        with self._lock:
            if entry.checkpoint_id in self._buffers:
                self._buffers.remove(entry.checkpoint_id)
            self._dispatched.discard(entry.checkpoint_id)
            # Forget settled checkpoints so these maps stay small.
            for key in [k for k in self._attempts if k[1] <= entry.checkpoint_id]:
                del self._attempts[key]
            for ckp in [k for k in self._instants if k < entry.checkpoint_id]:
                del self._instants[ckp]
            self._committed.notify_all()

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

    # ------------------------------------------------------------------ recovery
    def restore(self, checkpoint_id: int) -> dict[str, Any]:
        """Recover after a driver restart; ``checkpoint_id`` is the last batch Spark
        committed. Recommits the snapshot's entries exactly once, waits for the writers to
        re-send the batch of ``checkpoint_id`` (their checkpoint id - 1), and rolls back
        every stream instant written after the restored checkpoint."""
        return self._meta.submit(self._restore, checkpoint_id).result()

    def _restore(self, checkpoint_id: int) -> dict[str, Any]:
        payload = None
        if self.keep_state and self.state_store is not None:
            payload = self.state_store.load(checkpoint_id)
        restored = [EventBuffers.entry_from_dict(d) for d in (payload or {}).get("entries", [])]
        with self._lock:
            self._last_ack = checkpoint_id
        recommitted: list[str] = []
        skipped: list[str] = []
        rolled_back: list[str] = []
        now = time.monotonic()
        for entry in restored:
            state = table_port.instant_state(self.table, entry.instant)
            if state == table_port.COMPLETED:
                skipped.append(entry.instant)
                continue
            if state != table_port.PENDING:
                err = RecoveryError(
                    f"refusing to recommit instant {entry.instant} of checkpoint "
                    f"{entry.checkpoint_id}: it is {state} on the timeline"
                )
                raise self._fail(entry, err)
            table_port.adopt(self.table, entry.instant)
            with self._lock:
                self._buffers.put(entry)
            self._dispatch([entry], now).result()
            recommitted.append(entry.instant)
        restored_instants = {e.instant for e in restored}
        for instant, ckp in table_port.pending_stream_instants(self.table):
            if instant in restored_instants:
                continue
            if ckp == checkpoint_id - 1:
                # The batch Spark committed last: its writers hold its WriteMeta and
                # re-send it (bootstrap); commit when every task has.
                table_port.adopt(self.table, instant)
                with self._lock:
                    self._buffers.init_new(ckp, instant)
                    self._instants[ckp] = instant
                    self._current_instant = max(self._current_instant, instant)
                    self._awaiting_bootstrap.add(ckp)
            else:
                self._rollback(instant, f"recovery from checkpoint {checkpoint_id}")
                rolled_back.append(instant)
        summary = {
            "restored_checkpoint_id": checkpoint_id,
            "recommitted": recommitted,
            "skipped": skipped,
            "rolled_back": rolled_back,
            "epoch": self.epoch,
        }
        self.recorder("recovery", summary)
        return summary

    # ------------------------------------------------------------------ introspection
    def pending_instants(self) -> int:
        with self._lock:
            return len(self._buffers)

    def status(self) -> dict[str, Any]:
        with self._lock:
            return {
                "mode": self.mode,
                "requested_mode": self.requested_mode,
                "epoch": self.epoch,
                "current_instant": self._current_instant,
                "last_ack": self._last_ack,
                "pending_instants": len(self._buffers),
                "pending": {e.checkpoint_id: e.instant for e in self._buffers.entries()},
                # ACKed but not committed yet; the next ACK will commit them.
                "overdue": sorted(
                    e.checkpoint_id
                    for e in self._covered_by(self._last_ack + 1)
                    if e.checkpoint_id < self._last_ack
                ),
                "awaiting_bootstrap": sorted(self._awaiting_bootstrap),
                "ignored_events": self._ignored_events,
                "failed": None if self._failure is None else str(self._failure),
            }

    def drain(self, timeout_s: float | None = None) -> None:
        """Wait until every queued event, snapshot, ACK and commit has been handled."""
        self._meta.submit(lambda: None).result(timeout=timeout_s)
        self._committer.submit(lambda: None).result(timeout=timeout_s)

    def close(self) -> None:
        """Stop accepting work; a commit that is running finishes in the background. An
        instant creation waiting for earlier commits (blocking mode) gives up now: the
        interpreter's exit joins its thread, which would otherwise wait its whole
        commit_ack_timeout_s (a stopped driver lingered a minute)."""
        with self._lock:
            self._closed = True
            self._committed.notify_all()
        for executor in (self._instant_exec, self._meta, self._committer):
            executor.shutdown(wait=False, cancel_futures=True)
