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

The parts: engine/stream/coordinator_state.py (configuration, epoch and the shared state),
instant_requests.py ("instant-request"), instant_commits.py ("instant-commit"); the
meta thread's events, snapshots, ACKs and recovery are here.
"""

from __future__ import annotations

import time
from concurrent.futures import Future
from typing import Any

from engine.stream import table_port
from engine.stream.coordinator_state import ERROR, OK
from engine.stream.errors import RecoveryError, UnexpectedEventError
from engine.stream.instant_commits import InstantCommits
from engine.stream.instant_requests import InstantRequests
from engine.stream.write_meta import BufferEntry, EventBuffers, WriteMetaEvent


def _settle(target: Future[Any], source: Future[Any]) -> None:
    error = source.exception()
    if error is None:
        target.set_result(source.result())
    else:
        target.set_exception(error)


class Coordinator(InstantRequests, InstantCommits):
    """Creates one instant per checkpoint, buffers WriteMeta, commits on checkpoint ACKs.

    Driver calls: ``restore(c)`` once after a restart (c = last batch Spark committed),
    ``snapshot(b)`` before the writers of batch b start, ``notify_checkpoint_complete(b)``
    after Spark durably recorded batch b, ``close()`` at the end. Writers reach
    ``request_instant`` and ``handle_event`` through a transport.
    """

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
