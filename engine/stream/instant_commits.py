"""The coordinator's commits (engine/stream/coordinator.py), run on its "instant-commit"
thread: the buffered instants an ACK covers, serially and in checkpoint order, each
rolled back if it can never commit; with the shared wait the ACK's last commit also mints
the next checkpoint's instant."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from engine.stream import table_port
from engine.stream.coordinator_state import CoordinatorState
from engine.stream.errors import CommitFailedError, FencedError
from engine.stream.write_meta import BufferEntry


class InstantCommits(CoordinatorState):
    """Commits of the buffered instants (a part of Coordinator)."""

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
