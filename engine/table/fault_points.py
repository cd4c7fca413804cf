"""The engine's named fault points: `<operation>_<seam>`, every seam of the table's paths
where a paused (or killed) holder can be resumed into a world that moved on.

  operation: engine/table/operations.py (instant, commit, rollback, compaction, clean,
      archive), set where each runs;
  seam: truetime_wait (inside the TrueTime wait), after_checks (a commit's OCC and key
      checks passed, before its completion time), before_delete (a fenced delete), or
      before_<file> with file = truetime (the generation record) | requested | inflight |
      completed | claim (a rollback's claim of its target).

Every gap between two storage operations of these paths is the gap before some write or
delete or inside the TrueTime wait, so these points (with the coordinator's own commit
seams) are every seam. The scenario's `point` values are generated from FaultPoint
(harness/scenario/faults.py), and tests/unit/harness/test_pause_seams.py reaches each.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from engine.table.fence_domains import CLAIMS_DIR
from engine.table.operations import Seam
from engine.timeline.instant import parse_file_name
from engine.timeline.sequence import TRUETIME_FILE


class FaultPoint(StrEnum):
    INSTANT_BEFORE_TRUETIME = "instant_before_truetime"
    INSTANT_TRUETIME_WAIT = "instant_truetime_wait"
    INSTANT_BEFORE_REQUESTED = "instant_before_requested"
    INSTANT_BEFORE_INFLIGHT = "instant_before_inflight"
    COMMIT_AFTER_CHECKS = "commit_after_checks"
    COMMIT_BEFORE_TRUETIME = "commit_before_truetime"
    COMMIT_TRUETIME_WAIT = "commit_truetime_wait"
    COMMIT_BEFORE_COMPLETED = "commit_before_completed"
    ROLLBACK_BEFORE_TRUETIME = "rollback_before_truetime"
    ROLLBACK_TRUETIME_WAIT = "rollback_truetime_wait"
    ROLLBACK_BEFORE_CLAIM = "rollback_before_claim"
    ROLLBACK_BEFORE_REQUESTED = "rollback_before_requested"
    ROLLBACK_BEFORE_DELETE = "rollback_before_delete"
    ROLLBACK_BEFORE_COMPLETED = "rollback_before_completed"
    COMPACTION_BEFORE_TRUETIME = "compaction_before_truetime"
    COMPACTION_TRUETIME_WAIT = "compaction_truetime_wait"
    COMPACTION_BEFORE_REQUESTED = "compaction_before_requested"
    COMPACTION_BEFORE_INFLIGHT = "compaction_before_inflight"
    COMPACTION_BEFORE_COMPLETED = "compaction_before_completed"
    CLEAN_BEFORE_DELETE = "clean_before_delete"
    ARCHIVE_BEFORE_DELETE = "archive_before_delete"


_NAMED_AS_IS = (Seam.TRUETIME_WAIT, Seam.AFTER_CHECKS, Seam.BEFORE_DELETE)


def _file_kind(path: str) -> str | None:
    if path.startswith(CLAIMS_DIR):
        return "claim"
    if path == TRUETIME_FILE:
        return "truetime"
    instant = parse_file_name(path.rsplit("/", 1)[-1])
    if instant is None:
        return None
    return "completed" if instant.is_completed else instant.state.lower()


def fault_point(seam: str, info: Mapping[str, Any]) -> FaultPoint | None:
    """The named point of a seam a fence hook got (None: a seam no fault can name: outside
    every operation, a write of another file, or a combination no path has)."""
    operation = info.get("operation")
    if operation is None:
        return None
    if seam in _NAMED_AS_IS:
        suffix = str(seam)
    elif seam == Seam.BEFORE_WRITE:
        kind = _file_kind(str(info.get("path", "")))
        if kind is None:
            return None
        suffix = f"before_{kind}"
    else:
        return None
    try:
        return FaultPoint(f"{operation}_{suffix}")
    except ValueError:
        return None
