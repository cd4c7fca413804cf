"""Cleaning: Hudi's KEEP_LATEST_COMMITS cleaner, as a `clean` instant.

Retaining the last M commits means: every read "as of" a completion time at or after the
oldest of them (the retention boundary E) must still find its files. As of E each file
group reads one slice (its newest base slice and the logs on it); everything newer is
needed too. What a read as of E does not read and that completed at or before E is a
superseded slice no read inside the window needs: those files are deleted. Reads as of a
time before E (and incremental pulls that begin before E) are out of the window: their
files may be gone, and a reader must say so, not report lost data (`in_window`).

The clean is an instant like Hudi's: `<t>.clean.requested` holds the plan (E and the
files), `<t>.clean.inflight` while files are deleted, `<t>_<c>.clean` when done (the
plan again, in Hudi's HoodieCleanMetadata record: engine/timeline/clean_metadata.py).
Planning and completing hold the table lock (fenced like every timeline write); deleting
does not, but each delete is fenced too (engine/table/fencing.py: Fence.delete), so a
zombie coordinator's cleaner deletes nothing once its successor sealed its epoch. A
clean that stopped midway is finished by the next one (deleting is idempotent); failed-
write cleaning leaves it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.layout.file_names import DataFile
from engine.layout.file_slices import FileSystemView
from engine.table.operations import Operation, runs
from engine.timeline.clean_metadata import PLAN_KEY
from engine.timeline.commit_metadata import CommitMetadata
from engine.timeline.instant import COMMIT_ACTIONS, INFLIGHT, REQUESTED, Instant

if TYPE_CHECKING:
    from engine.table.ops import TableOps

ACTION = "clean"


@runs(Operation.CLEAN)
def clean(table: TableOps, retain_commits: int) -> Instant | None:
    """Finish any interrupted clean, then plan and run a new one. Returns the completed
    clean instant, or None if there was nothing to delete."""
    for pending in table.reload().timeline.pending(ACTION):
        _run(table, pending)
    with table.locked():
        plan = _plan(table, retain_commits)
        if plan is None:
            return None
        generated = table.generator.generate_stamped(locked=True)
        meta = CommitMetadata(requested_seq=generated.seq, extra={PLAN_KEY: plan})
        requested = table.timeline.create_requested(ACTION, generated.time, meta)
        inflight = table.timeline.transition_to_inflight(requested)
    return _run(table, inflight)


def _plan(table: TableOps, retain_commits: int) -> dict[str, Any] | None:
    """Under the lock: the retention boundary and the files no read inside it needs."""
    if not table.safety.clean_retention and retain_commits > 0:
        retain_commits = 1  # the switch off: the window shrinks to the latest commit
    timeline = table.timeline.reload()
    commits = [i for i in timeline.completed(include_archived=True) if i.action in COMMIT_ACTIONS]
    if retain_commits < 1 or len(commits) <= retain_commits:
        return None
    retained = commits[-retain_commits]
    boundary = retained.completed_at
    if boundary <= (retained_from(table) or ""):
        return None  # cleaned up to there already
    at_boundary = table.catalog.view(as_of=boundary)
    planned = {  # a pending compaction reads the slice it planned
        name
        for c in timeline.pending("compaction")
        for entry in timeline.read_metadata(c.with_state(REQUESTED)).compaction_plan or []
        for name in ([entry["base"]] if entry.get("base") else []) + list(entry.get("logs", []))
    }
    files = sorted(superseded_files(at_boundary) - planned)
    return {
        "retain_commits": retain_commits,
        "earliest_retained": boundary,
        # Hudi's earliestCommitToRetain: its time travel to T >= it finds its files.
        "earliest_retained_instant": retained.requested_time,
        "files": files,
    }


def _slice_files(base: DataFile | None, logs: list[DataFile]) -> list[DataFile]:
    return ([base] if base is not None else []) + list(logs)


def superseded_files(view: FileSystemView) -> set[str]:
    """The files of `view` a read of it does not read: every slice but each group's latest."""
    needed = latest_files(view)
    return {
        f.name
        for group in view.groups.values()
        for s in group.slices
        for f in _slice_files(s.base, s.logs)
        if f.name not in needed
    }


def latest_files(view: FileSystemView) -> set[str]:
    """The files a read of `view` reads: each file group's latest slice."""
    return {f.name for fid in view.file_ids() for f in _slice_files(*view.latest(fid))}


def _run(table: TableOps, instant: Instant) -> Instant:
    """Delete the planned files, then complete the clean (under the lock)."""
    plan = table.timeline.read_metadata(instant.with_state(REQUESTED)).extra.get(PLAN_KEY) or {}
    for name in plan.get("files", []):
        table.fence.delete(name)
    with table.locked():
        table.timeline.reload()
        current = table.timeline.get(instant.requested_time)
        if current is None or current.is_completed:
            return current or instant  # another cleaner finished it
        requested = table.timeline.read_metadata(current.with_state(REQUESTED))
        generated = table.generator.generate_stamped(locked=True)
        meta = CommitMetadata(
            writer_id=table.writer_id,
            requested_seq=requested.requested_seq,
            completion_seq=generated.seq,
            extra={PLAN_KEY: plan},
        )
        return table.timeline.complete(current.with_state(INFLIGHT), generated.time, meta)


def _plans(table: TableOps) -> list[dict[str, Any]]:
    """The plans of every clean on the timeline (pending ones may be deleting now)."""
    timeline = table.timeline
    cleans = [i for i in timeline.completed(include_archived=True) if i.action == ACTION]
    cleans += [i.with_state(REQUESTED) for i in timeline.pending(ACTION)]
    return [timeline.read_metadata(i).extra.get(PLAN_KEY) or {} for i in cleans]


def retained_from(table: TableOps) -> str | None:
    """The retention boundary E: reads as of E or later find their files (None: nothing was
    ever cleaned, every read is inside the window). The timeline as last loaded."""
    bounds = [p["earliest_retained"] for p in _plans(table) if p.get("earliest_retained")]
    return max(bounds, default=None)


def in_window(table: TableOps, point: str | None) -> bool:
    """Whether a read as of `point` (or an incremental pull beginning after `point`; None:
    from the start) is inside the retention window."""
    boundary = retained_from(table)
    return boundary is None or (point is not None and point >= boundary)


def cleaned_files(table: TableOps) -> set[str]:
    """Every file a clean on the timeline deleted or is deleting (its plans say so)."""
    return {name for plan in _plans(table) for name in plan.get("files", [])}
