"""Starting an instant (Table.start_instant, and the next one commit_and_start begins in
its hold): REQUESTED then INFLIGHT under the table lock, the marker directory and the
heartbeat after it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.errors import EngineError
from engine.table.operations import Operation, runs
from engine.timeline.instant import INFLIGHT, Instant
from engine.timeline.sequence import REQUESTED_SEQ
from engine.truetime import InstantTiming

if TYPE_CHECKING:
    from engine.table.ops import TableOps


@runs(Operation.INSTANT)  # also inside commit_and_start's hold: the instant's seams
def begin(
    table: TableOps, t: str, seq: int | None, action: str | None, metadata: dict[str, Any] | None
) -> tuple[Instant, dict[str, Any]]:
    """REQUESTED then INFLIGHT for time `t` (under the table lock); returns the inflight
    instant and the requested metadata it was written with."""
    action = action or ("commit" if table.config.table_type == "cow" else "deltacommit")
    if action == "commit" and table.config.table_type == "mor":
        raise EngineError(
            "a mor table writes deltacommits: in Hudi a completed commit of a mor table is"
            " a compaction"
        )
    meta = {
        **(metadata or {}),
        "writer_id": table.writer_id,
        "occ_baseline": table.timeline.last_completion_time(),
        REQUESTED_SEQ: seq,
    }
    requested = table.timeline.create_requested(action, t, meta)
    return table.timeline.transition_to_inflight(requested), meta


def after_lock(table: TableOps, inflight: Instant, timing: InstantTiming) -> Instant:
    """After the lock: the heartbeat (a lazy cleaner counts an instant without a
    heartbeat file from its requested time, no older than the TrueTime wait here)."""
    t = inflight.requested_time
    table.markers.open(t)  # before any writer records a file of it
    table.heartbeats.start(t)
    return Instant(t, inflight.action, INFLIGHT, timing=timing)
