"""Rollback of one instant, and cleaning of failed writes (lazy or eager)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.errors import RollbackError
from engine.timeline.instant import COMPLETED, INFLIGHT, Instant

if TYPE_CHECKING:
    from engine.table.table import Table


def rollback(table: Table, t: str, force: bool) -> Instant | None:
    with table._locked():
        timeline = table.timeline.reload()
        current = timeline.get(t)
        if timeline.is_rolled_back(t):
            if current is not None and current.is_pending:
                timeline.remove_pending(current)  # left over by an interrupted rollback
            return None
        if current is None:
            raise RollbackError(f"no instant {t} on the timeline to roll back")
        if current.is_completed and not force:
            raise RollbackError(
                f"refusing to roll back completed instant {t} "
                f"(completed at {current.completion_time}); pass force=True"
            )
        if current.is_completed and t not in {i.requested_time for i in timeline.instants()}:
            raise RollbackError(f"instant {t} is archived and cannot be rolled back")
        rb_time = table.generator.generate(locked=True)
        plan = {"rolled_back": t, "action": current.action, "state": current.state}
        rb = timeline.create_requested("rollback", rb_time, plan)
        done = _finish(table, rb, current)
    table.heartbeats.stop(t)
    return done


def _finish(table: Table, rb: Instant, target: Instant) -> Instant:
    """Delete the target's data files, complete the rollback, then drop the target."""
    deleted = []
    for f in table.data_files():
        if f.instant == target.requested_time:
            table.storage.delete(f.name, missing_ok=True)
            deleted.append(f.name)
    completion = table.generator.generate(locked=True)
    meta = {
        "rolled_back": target.requested_time,
        "action": target.action,
        "state": target.state,
        "deleted_files": deleted,
    }
    done = table.timeline.complete(rb, completion, meta)
    if target.state == COMPLETED:
        table.timeline.remove_completed(target)
    else:
        table.timeline.remove_pending(target)
    return done


def rollback_failed_writes(table: Table) -> list[str]:
    timeline = table.timeline.reload()
    live = table.heartbeats.live
    done = []
    for instant in timeline.pending():
        if instant.action == "rollback":
            _resume(table, instant)
            continue
        if instant.action == "compaction" or instant.requested_time in live:
            continue
        if table.safety.lazy_rollback and not table.heartbeats.is_expired(
            instant.requested_time, table.heartbeat_expiry_s
        ):
            continue
        try:
            if rollback(table, instant.requested_time, force=False) is not None:
                done.append(instant.requested_time)
        except RollbackError:
            pass  # it completed meanwhile
    return done


def _resume(table: Table, rb: Instant) -> None:
    """Finish a rollback that was interrupted after its requested file was written."""
    with table._locked():
        timeline = table.timeline.reload()
        if timeline.get(rb.requested_time) != rb:
            return
        target_time = timeline.read_metadata(rb)["rolled_back"]
        target = timeline.get(target_time) or Instant(target_time, "commit", INFLIGHT)
        _finish(table, rb, target)
