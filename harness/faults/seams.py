"""The harness's side of the engine's named seams: a fence hook that hands a fault the
point it is at, and the points `point: random` draws from.

The engine names its fault points (engine/table/fault_points.py FaultPoint,
`<operation>_<seam>`) and reports the operation running at each seam
(engine/table/operations.py); the scenario's table points are generated from that enum
(harness/scenario/faults.py TABLE_POINTS), so a seam the engine drops fails `validate` and
tests/unit/harness/test_pause_seams.py, which reaches every point.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, get_args

from engine.table.fault_points import fault_point
from harness.faults.kinds import FaultKind
from harness.scenario.faults import SHARED_WAIT_UNREACHED, TABLE_POINTS, CoordinatorPoint

Hook = Callable[[str, dict[str, Any]], None]
# Keys of a seam's info that are the engine's plumbing, not evidence.
_NOT_EVIDENCE = ("sleep_s", "operation")


def point_of(seam: str, info: dict[str, Any]) -> str | None:
    """The named point of an engine seam (None: a seam no fault can name)."""
    point = fault_point(seam, info)
    return None if point is None else point.value


def table_seam_hook(on_point: Hook) -> Hook:
    """A fence hook that calls `on_point(point, info)` at every named table seam."""

    def hook(seam: str, info: dict[str, Any]) -> None:
        point = point_of(seam, info)
        if point is not None:
            on_point(point, {k: v for k, v in info.items() if k not in _NOT_EVIDENCE})

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
