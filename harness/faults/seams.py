"""Name the engine's table seams by operation, so a pause (or crash) can pick any of them.

The engine reports anonymous seams on a table handle's fence hooks: `truetime_wait`
(inside the TrueTime wait of any generated time), `after_checks` (a commit's OCC and key
checks passed, before its completion time), `before_write` and `after_write` (of a
timeline file, a claim or the generation record, fenced or not), `before_delete` (of a
fenced delete). This module names them `<op>_<seam>`:

  op: instant (creating an instant: start_instant), commit (completing one), rollback,
      compaction (scheduling and running one), clean (a cleaner), archive (archival);
  seam: truetime_wait, after_checks, before_delete, or before_<file> with file =
      truetime (the generation record) | requested | inflight | completed | claim (a
      rollback's claim of its target).

Every gap between two storage operations of these paths is the gap before some write or
delete or inside the TrueTime wait, so these points (with the coordinator's own commit
seams) are every seam where a paused holder can be resumed into a world that moved on.

The operation is read off the call stack (the engine function that called the seam), which
keeps the engine free of fault-injection plumbing beyond the three hooks; a renamed engine
function shows up in tests/unit/harness/test_pause_seams.py, which reaches every point.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any, get_args

from engine.table.fencing import CLAIMS_DIR
from engine.timeline.instant import parse_file_name
from engine.timeline.sequence import TRUETIME_FILE
from harness.faults.kinds import FaultKind
from harness.scenario.faults import SHARED_WAIT_UNREACHED, TABLE_POINTS, CoordinatorPoint

# (file of engine/table, function) -> operation; the innermost match wins.
_OPS: dict[tuple[str, str | None], str] = {
    ("rollback.py", None): "rollback",
    ("compaction.py", None): "compaction",
    ("cleaning.py", None): "clean",
    ("table.py", "archive"): "archive",
    ("table.py", "start_instant"): "instant",
    # An instant's REQUESTED and INFLIGHT, also when a commit starts the next instant in
    # its own hold (commit_and_start: engine.truetime.shared_wait).
    ("table.py", "_begin"): "instant",
    ("table.py", "commit"): "commit",
    ("table.py", "commit_and_start"): "commit",
}
_ENGINE_TABLE = "/engine/table/"
_MAX_DEPTH = 30

Hook = Callable[[str, dict[str, Any]], None]


def _operation() -> str | None:
    frame: FrameType | None = sys._getframe(2)
    for _ in range(_MAX_DEPTH):
        if frame is None:
            return None
        path = frame.f_code.co_filename.replace("\\", "/")
        if _ENGINE_TABLE in path:
            name = path.rsplit("/", 1)[-1]
            op = _OPS.get((name, None)) or _OPS.get((name, frame.f_code.co_name))
            if op is not None:
                return op
        frame = frame.f_back
    return None


def _file_kind(path: str) -> str | None:
    if path.startswith(CLAIMS_DIR):
        return "claim"
    if path == TRUETIME_FILE:
        return "truetime"
    instant = parse_file_name(path.rsplit("/", 1)[-1])
    if instant is None:
        return None
    return "completed" if instant.is_completed else instant.state.lower()


def point_of(seam: str, info: dict[str, Any]) -> str | None:
    """The named point of an engine seam (None: a seam no fault can name)."""
    if seam in ("truetime_wait", "after_checks", "before_delete"):
        suffix = seam
    elif seam == "before_write":
        kind = _file_kind(str(info.get("path", "")))
        if kind is None:
            return None
        suffix = f"before_{kind}"
    else:
        return None
    op = _operation()
    point = f"{op}_{suffix}"
    return point if op is not None and point in TABLE_POINTS else None


def table_seam_hook(on_point: Hook) -> Hook:
    """A fence hook that calls `on_point(point, info)` at every named table seam."""

    def hook(seam: str, info: dict[str, Any]) -> None:
        point = point_of(seam, info)
        if point is not None:
            on_point(point, {k: v for k, v in info.items() if k != "sleep_s"})

    return hook


def concrete_points(kind: str, shared_wait: bool = False) -> tuple[str, ...]:
    """The points `random` draws from: the seams every run reaches (the coordinator's
    commit seams, instant creation and commit). Rollback and compaction happen only in
    some runs, so a drawn one could leave the fault unapplied: those are named. With the
    stream's shared wait (engine.truetime.shared_wait) its commits mint its instants."""
    table = tuple(p for p in TABLE_POINTS if p.startswith(("instant_", "commit_")))
    if kind == FaultKind.BATCH_WRITER_PAUSE:
        return table
    if shared_wait:
        table = tuple(p for p in table if p not in SHARED_WAIT_UNREACHED)
    return get_args(CoordinatorPoint) + table


def draw_point(kind: str, seed: int, shared_wait: bool = False) -> str:
    """`point: random`: one seam per run, drawn from the fault's (or scenario's) seed."""
    return random.Random(seed).choice(concrete_points(kind, shared_wait))
