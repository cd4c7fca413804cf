"""One hold of the table lock (`with table.locked() as held:`, engine/table/table.py): the
lock taken, this hold's fencing grant open (engine/table/fencing.py), the timeline
pinned; `held.wait_ms` says how long the lock took to get."""

from __future__ import annotations

import time
from typing import Protocol

from engine.locks.base import LockProvider
from engine.table.fencing import Fence
from engine.timeline.active import ActiveTimeline
from engine.timeline.sequence import StoredLastGenerated


class HoldingTable(Protocol):
    """What a lock hold touches of its table (engine/table/table.py Table)."""

    lock: LockProvider  # read at every hold: a deployment may swap the provider
    lock_timeout_s: float
    fence: Fence
    timeline: ActiveTimeline
    truetime_store: StoredLastGenerated
    last_hold: object | None  # the lock hold this table ended last, cleanly


class LockHold:
    """`with LockHold(table) as held:` takes the table lock; held.wait_ms says how long."""

    def __init__(self, table: HoldingTable) -> None:
        self.table, self.wait_ms = table, 0.0

    def __enter__(self) -> LockHold:
        t0 = time.perf_counter()
        table, lock = self.table, self.table.lock
        lock.acquire(table.lock_timeout_s)
        self.wait_ms = (time.perf_counter() - t0) * 1000
        try:
            table.fence.open(lock.token, lock.fence_domain)  # this hold's fencing grant
        except BaseException:
            lock.release()
            raise
        # Nobody held the lock since this table's own last hold (ended cleanly): nothing
        # changed the timeline or the generation record but this table, which recorded its
        # changes, so neither is read again (engine/locks/base.py: hold, follows).
        follows = lock.follows
        fresh = follows is not None and follows == table.last_hold
        table.last_hold = None  # until this hold ends cleanly
        table.timeline.pin(fresh=fresh)
        table.truetime_store.hold_begins(fresh)
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        table = self.table
        table.truetime_store.trusted = False
        table.timeline.unpin()
        table.fence.end()
        if exc_type is None:  # a failed hold may have left storage and caches apart
            table.last_hold = table.lock.hold
        table.lock.release()
