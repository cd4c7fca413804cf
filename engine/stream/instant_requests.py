"""The coordinator's instant requests (engine/stream/coordinator.py): one instant per
checkpoint, created on its "instant-request" thread in checkpoint order, after the
earlier commits in blocking mode, or taken from the commit that minted it (shared wait)."""

from __future__ import annotations

import time
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from engine.stream import table_port
from engine.stream.coordinator_state import ERROR, PENDING, READY, CoordinatorState, Created
from engine.stream.errors import InstantTimeoutError, StreamError


class InstantRequests(CoordinatorState):
    """The writers' instant requests (a part of Coordinator)."""

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

    def _submit_in_order(self, checkpoint_id: int) -> Future[Created]:
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

    def _create_instant(self, checkpoint_id: int, ahead_of: int | None = None) -> Created:
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
                return Created(minted, blocked_ms)
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
        return Created(instant, blocked_ms)

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
