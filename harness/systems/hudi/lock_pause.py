"""A Hudi batch writer stopped while it holds the table lock, past its lease, then resumed
(`batch_writer_pause`: the zombie lock holder of apache/hudi#19357, on Hudi's own writer).

From at_s on, the runner reads who holds the ZooKeeper lock (harness/systems/hudi/
lock_holder.py). The target batch writer is stopped, its python, its JVM and the JVM's
python workers (SIGSTOP), at its point: `lock_held`, the first time it is seen holding
the lock; `commit_before_completed`, once the metadata table's commit of its instant is
inflight while it holds the lock, which Hudi writes after its conflict check and before
the completed instant. Stopped, its ZooKeeper session sends no heartbeat: the server
expires it after the lease (the session timeout) and deletes its lock node. Once
duration_s passed and another batch writer took the lock and completed a commit (or
duration_s + 90 s passed), the writer gets SIGCONT and carries on where it stood, inside
Hudi's critical section, believing it still holds the lock.

Applied only once its effect was seen: every process of the writer stopped while its
session owned the lock node, the node vanished while it stood, and another batch writer's
session took the lock and a commit completed under it.
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from harness.faults.evidence import record_fault
from harness.faults.schedule import Occurrence
from harness.history import HistoryWriter
from harness.systems.hudi.lock_holder import LockHolder, LockHolders
from harness.systems.hudi.process_tree import halted, signal_tree, signal_tree_of

LOCK_HELD = "lock_held"
COMPLETED = re.compile(r"^\d{17}_\d{17}\.(commit|deltacommit)$")
METADATA_INFLIGHT = re.compile(r"^\d{17}\.deltacommit\.inflight$")
TAKEOVER_GRACE_S = 90.0  # past duration_s, how long a paused writer waits for a successor


@dataclass
class PauseState:
    holder: LockHolder | None = None  # the target, seen holding the lock and stopped
    paused_s: float = 0.0
    expired_s: float | None = None  # its lock node vanished (the session expired)
    successor: LockHolder | None = None  # another batch writer, seen holding the lock
    completed_before: frozenset[str] = frozenset()  # ... the completed commits then
    successor_commit: str | None = None  # what it completed while it held the lock
    metadata_inflight: str | None = None  # commit_before_completed: the seam's sign
    resumed_s: float | None = None


class LockHolderPause:
    """Driven from the run's loop: `step(elapsed)` every tick, `release()` at the stop."""

    def __init__(
        self,
        occurrence: Occurrence[Any],
        holders: LockHolders,
        groups: Callable[[], Mapping[str, int]],
        history: HistoryWriter,
        lease_s: float,
        table: Path,
    ) -> None:
        self.occurrence, self.holders, self.groups = occurrence, holders, groups
        self.history, self.lease_s, self.table = history, lease_s, table
        self.point = str(getattr(occurrence.fault, "point", LOCK_HELD))
        # commit_before_completed: the metadata table's inflights when the holder took the lock
        self._baseline: tuple[str, frozenset[str]] | None = None
        self.state = PauseState()
        self.stopped: list[psutil.Process] = []  # every process the pause stopped
        self._seen: LockHolder | None = None  # the last holder read, to name it once

    def _holder(self) -> LockHolder | None:
        """The holder now; its owner is looked up only when the lock node changed."""
        held = self.holders.holder_node()
        if held is None:
            return None
        if self._seen is None or self._seen.node != held[0]:
            self._seen = self.holders.holder(self.groups())
        return self._seen

    def step(self, elapsed: float) -> None:
        state = self.state
        if state.resumed_s is not None or elapsed < self.occurrence.at_s:
            return
        if state.holder is None:
            self._pause_if_due(elapsed)
            return
        if state.expired_s is None and not self.holders.exists(state.holder.node):
            state.expired_s = elapsed
        if state.expired_s is not None:
            self._watch_takeover()
        stood = elapsed - state.paused_s
        duration = float(self.occurrence.fault.duration_s)
        taken_over = state.successor_commit is not None
        if stood >= duration and (taken_over or stood >= duration + TAKEOVER_GRACE_S):
            self._resume(elapsed)

    def _watch_takeover(self) -> None:
        """Another batch writer takes the lock and commits while this one stands: the commit
        is whatever completed between the moment it was seen holding the lock and the
        moment its lock node went (nobody else can complete a commit meanwhile)."""
        state = self.state
        if state.successor_commit is not None:
            return
        if state.successor is None:
            holder = self._holder()
            if holder is not None and self._other_batch_writer(holder):
                state.successor, state.completed_before = holder, completed(self.table)
        elif not self.holders.exists(state.successor.node):
            new = completed(self.table) - state.completed_before
            state.successor_commit = min(new) if new else None
            if not new:  # it held the lock for something else (its instant time): next one
                state.successor = None

    def _other_batch_writer(self, holder: LockHolder) -> bool:
        owner = holder.owner or ""
        return owner.startswith("batch_writer:") and owner != str(self.occurrence.target)

    def _pause_if_due(self, elapsed: float) -> None:
        holder = self._holder()
        target = str(self.occurrence.target)
        if holder is None or holder.owner != target or not self._at_point(holder):
            return
        stopped = signal_tree(self.groups()[target], signal.SIGSTOP)
        if halted(stopped) and self.holders.exists(holder.node):
            self.state.holder, self.state.paused_s, self.stopped = holder, elapsed, stopped
        else:  # it let go before the stop landed: not the pause asked for, try again
            signal_tree_of(stopped, signal.SIGCONT)

    def _at_point(self, holder: LockHolder) -> bool:
        """lock_held: now. commit_before_completed: once the metadata table's commit of
        the holder's instant is inflight; Hudi writes it under the lock after its conflict
        check and before the completed instant."""
        if self.point == LOCK_HELD:
            return True
        inflight = metadata_inflights(self.table)
        if self._baseline is None or self._baseline[0] != holder.node:
            self._baseline = (holder.node, inflight)  # what was there before it held it
            return False
        new = inflight - self._baseline[1]
        self.state.metadata_inflight = min(new) if new else None
        return bool(new)

    def _resume(self, elapsed: float) -> None:
        state = self.state
        self.release()
        state.resumed_s = elapsed
        if state.holder is None or state.expired_s is None or state.successor_commit is None:
            return  # no lease ran out, or nobody committed meanwhile: not the fault asked for
        record_fault(self.history, self.occurrence, state.paused_s, **self.evidence())

    def evidence(self) -> dict[str, Any]:
        state = self.state
        assert state.holder is not None and state.successor is not None
        return {
            "point": self.point,
            "metadata_inflight": state.metadata_inflight,
            "lock_node": state.holder.node,
            "session": hex(state.holder.session),
            "client_port": state.holder.port,
            "stopped_s": round(state.paused_s, 3),
            "lease_s": self.lease_s,
            "lease_expired_s": state.expired_s,
            "successor": state.successor.owner or hex(state.successor.session),
            "successor_node": state.successor.node,
            "successor_commit": state.successor_commit,
            "resumed_s": round(float(state.resumed_s or 0.0), 3),
            "seen_by": "ZooKeeper's lock node and cons, the kernel's socket table, the timeline",
        }

    def unsettled(self) -> bool:
        return self.state.resumed_s is None

    def release(self) -> None:
        """SIGCONT every process stopped (also when the run stops early)."""
        if self.state.holder is not None and self.state.resumed_s is None:
            signal_tree_of(self.stopped, signal.SIGCONT)


def _names(folder: Path, pattern: re.Pattern[str]) -> frozenset[str]:
    try:
        return frozenset(n for n in os.listdir(folder) if pattern.match(n))
    except FileNotFoundError:
        return frozenset()


def completed(table: Path) -> frozenset[str]:
    """The data timeline's completed commits and deltacommits."""
    return _names(table / ".hoodie" / "timeline", COMPLETED)


def metadata_inflights(table: Path) -> frozenset[str]:
    """The metadata table's inflight deltacommits (one per data commit being completed)."""
    return _names(table / ".hoodie" / "metadata" / ".hoodie" / "timeline", METADATA_INFLIGHT)
