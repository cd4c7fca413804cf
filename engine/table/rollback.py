"""Rollback of one instant, and cleaning of failed writes (lazy or eager)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.errors import CorruptInstantError, InstantClaimedError, RollbackError
from engine.table.operations import Operation, runs
from engine.timeline.commit_metadata import CommitMetadata, RollbackRecord
from engine.timeline.instant import COMPLETED, INFLIGHT, Instant
from engine.timeline.sequence import generated_times

if TYPE_CHECKING:
    from engine.table.ops import TableOps


@runs(Operation.ROLLBACK)
def rollback(table: TableOps, t: str, force: bool) -> Instant | None:
    with table.locked():
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
        generated = table.generator.generate_stamped(locked=True)
        if current.is_pending:
            _claim(table, t)
        plan = CommitMetadata(
            requested_seq=generated.seq,
            rollback=RollbackRecord(
                t, current.action, current.state, _generated_by(table, current)
            ),
        )
        rb = timeline.create_requested("rollback", generated.time, plan)
        done = _finish(table, rb, current, plan)
    table.heartbeats.stop(t)
    return done


def _claim(table: TableOps, t: str) -> None:
    """Claim the pending target first: from here on nothing completes it (a committer
    paused past its checks fails its claim; engine/table/fencing.py)."""
    try:
        table.fence.claim(t, {"action": "rollback", "target": t})
    except InstantClaimedError:
        raise RollbackError(f"instant {t} is being completed by another process") from None


@runs(Operation.ROLLBACK)
def release_abandoned_claim(table: TableOps, t: str) -> bool:
    """A commit of `t` (under the table lock) found `t` claimed by a rollback of another
    lock token. That holder no longer holds the lock; once it is sealed, nothing it does
    lands. If its rollback never put its plan on the timeline, it never deleted a file
    either (it deletes only after the plan), so its claim is void and `t` may complete:
    True. Otherwise the rollback must be finished (by rollback_failed_writes): False."""
    fence = table.fence
    held = fence.read_claim(t)
    if held is None or held.get("action") != "rollback" or held.get("token") in (None, fence.token):
        return False
    fence.seal_token(str(held["token"]))  # before the listing below: no plan lands after it
    if table.timeline.reload(force=True).is_rolled_back(t):
        return False
    fence.void_claim(t, held)
    return True


def _generated_by(table: TableOps, target: Instant) -> list[dict[str, Any]]:
    """The target's generated times with their sequence numbers: its files disappear, the
    rollback keeps the record (a read of its metadata; rollbacks are off the hot path)."""
    try:
        meta = table.timeline.read_metadata(target)
    except (OSError, CorruptInstantError):
        meta = None  # unnumbered: a checker counts the order evidence as partial
    return generated_times(target, meta)


def _finish(table: TableOps, rb: Instant, target: Instant, plan: CommitMetadata) -> Instant:
    """Delete the target's data files, complete the rollback, then drop the target."""
    deleted = _delete_files(table, target)
    generated = table.generator.generate_stamped(locked=True)
    planned = plan.rollback
    meta = CommitMetadata(
        requested_seq=plan.requested_seq,
        completion_seq=generated.seq,
        rollback=RollbackRecord(
            target.requested_time,
            target.action,
            target.state,
            planned.generated if planned is not None else None,
            deleted,
        ),
    )
    done = table.timeline.complete(rb, generated.time, meta)
    if target.state == COMPLETED:
        table.timeline.remove_completed(target)
    else:
        table.timeline.remove_pending(target)
    return done


def _delete_files(table: TableOps, target: Instant) -> list[str]:
    """The target's data files. Its markers name them: the directory is sealed first, so no
    late writer (a task attempt, a zombie) adds one after. A completed target (force), or a
    table without markers, is found by listing the table folder. Each delete is fenced
    (engine/table/fencing.py: Fence.delete): a rollback whose holder was taken over, paused
    anywhere before it, deletes nothing."""
    t = target.requested_time
    deleted = table.markers.finish(t)  # fenced deletes: the table's Markers use fence.delete
    if target.state == COMPLETED or not table.markers.enabled:
        for f in table.data_files():
            if f.instant == t and f.name not in deleted:
                table.fence.delete(f.name)
                deleted.append(f.name)
    return deleted


@runs(Operation.ROLLBACK)
def rollback_failed_writes(table: TableOps) -> list[str]:
    timeline = table.timeline.reload()
    live = table.heartbeats.live
    done = []
    for instant in timeline.pending():
        if instant.action == "rollback":
            _resume(table, instant)
            continue
        # A pending compaction or clean is re-run (engine/table/cleaning.py), not undone.
        if instant.action in ("compaction", "clean") or instant.requested_time in live:
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
    _finish_markers(table)
    return done


def _finish_markers(table: TableOps) -> None:
    """Marker directories of completed instants, left by a committer that died right after
    completing: their unlisted files went before completion; a straggler's may remain."""
    if not table.markers.enabled:
        return
    for t in table.markers.open_instants():
        instant = table.timeline.get(t)
        if instant is not None and instant.is_completed:
            table.markers.finish(t, [f.name for f in table.catalog.files_of(instant)])


def _resume(table: TableOps, rb: Instant) -> None:
    """Finish a rollback that was interrupted after its requested file was written."""
    with table.locked():
        timeline = table.timeline.reload()
        if timeline.get(rb.requested_time) != rb:
            return
        plan = timeline.read_metadata(rb)
        if plan.rollback is None:
            raise CorruptInstantError(rb.file_name, "a rollback plan without its target")
        target_time = plan.rollback.rolled_back
        target = timeline.get(target_time) or Instant(target_time, "commit", INFLIGHT)
        _finish(table, rb, target, plan)
