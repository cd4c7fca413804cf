"""Archival: the oldest instants moved from the active timeline to the archived one (LSM
history, engine/timeline/archive.py), as Hudi's archiver moves them."""

from __future__ import annotations

from itertools import takewhile

from engine.table.ops import TableOps
from engine.timeline.active import TIMELINE_DIR
from engine.timeline.archive import ArchivedEntry
from engine.timeline.instant import COMMIT_ACTIONS, REQUESTED, Instant


def archive(ops: TableOps, keep: int = 30) -> int:
    """Move the oldest instants to the archived timeline, keeping the latest `keep`
    commits (data writes and compactions, by completion) on the active one.

    What moves is a prefix in REQUESTED order, as Hudi's archiver moves one along its
    timeline: every instant requested before the earliest kept commit was requested
    (cleans and rollbacks too), stopping at the first that completed after the earliest
    pending instant was requested (so OCC never needs archived instants). A reader of
    the active timeline alone (hudi-rs, Java Hudi's file system view) takes the files of
    instants requested before its first instant as committed and drops the others not
    on it: an instant requested early and completed late (a stream instant recommitted
    after a restart) therefore keeps every later-requested one active, and cleans never
    count toward `keep` (a clean after each commit once pushed every commit off, and
    hudi-rs read an empty table). Returns how many moved."""
    with ops.locked():
        ops.timeline.reload()
        completed = ops.timeline.completed()
        pending = ops.timeline.pending()
        limit = pending[0].requested_time if pending else None
        commits = [i for i in completed if i.action in COMMIT_ACTIONS]
        kept = commits[max(0, len(commits) - keep) :] if keep > 0 else []
        if keep > 0 and not kept:
            return 0
        start = min((i.requested_time for i in kept), default=None)
        movable = list(
            takewhile(
                lambda i: (
                    (start is None or i.requested_time < start)
                    and (limit is None or i.completed_at < limit)
                ),
                sorted(completed, key=lambda i: i.requested_time),
            )
        )
        entries = []
        for i in movable:
            ops.catalog.files_of(i)  # keep the parsed file list cached
            raw = ops.storage.read_bytes(f"{TIMELINE_DIR}/{i.file_name}")
            ops.timeline.read_metadata(i)  # raises CorruptInstantError if broken
            entries.append(ArchivedEntry(i, raw, _plan_bytes(ops, i)))
        ops.timeline.archive.append(entries)
        for i in movable:
            ops.timeline.remove_completed(i)
    return len(movable)


def _plan_bytes(ops: TableOps, instant: Instant) -> bytes | None:
    """What an archived instant keeps as its plan, as Hudi's archiver does: its
    requested file's bytes (a clean's or a compaction's plan), None when empty."""
    try:
        plan = ops.storage.read_bytes(f"{TIMELINE_DIR}/{instant.pending_file(REQUESTED)}")
    except FileNotFoundError:
        return None
    return plan or None
