"""The few table operations the stream uses, in one place.

The coordinator and writer call the table only through these functions, so the
contract in engine/README.md (and what it lacks: timeline queries) is visible here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Marks the instants a stream coordinator created, so recovery never touches instants of
# batch writers that share the table.
STREAM_TAG = "stream_checkpoint_id"

COMPLETED = "completed"
PENDING = "pending"
ROLLED_BACK = "rolled_back"
MISSING = "missing"


def instant_time(instant: Any) -> str:
    return instant if isinstance(instant, str) else str(instant.requested_time)


def start_instant(table: Any, checkpoint_id: int, epoch: int) -> tuple[str, dict[str, float]]:
    """REQUESTED -> INFLIGHT under the table lock with TrueTime; returns (time, timing)."""
    inst = table.start_instant(
        action="commit", metadata={STREAM_TAG: checkpoint_id, "coordinator_epoch": epoch}
    )
    timing = getattr(inst, "timing", None) or getattr(table, "last_instant_timing", None) or {}
    return instant_time(inst), dict(timing)


def write_files(
    table: Any, instant: str, records: Any, op: str, write_token: str, prior: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    from engine.table import WriteStat

    stats = table.write_files(
        instant,
        records,
        op=op,
        write_token=write_token,
        prior=[WriteStat.from_dict(p) for p in prior],
    )
    return [s.to_dict() for s in stats]


def commit(
    table: Any,
    instant: str,
    stats: list[dict[str, Any]],
    metadata: dict[str, Any],
    guard: Callable[[], None] | None,
) -> str:
    from engine.table import WriteStat

    completion = table.commit(
        instant, [WriteStat.from_dict(s) for s in stats], metadata=metadata, guard=guard
    )
    return instant_time(completion)


def rollback(table: Any, instant: str) -> None:
    table.rollback(instant)


def stat_failed(stat: dict[str, Any]) -> bool:
    return bool(stat.get("errors"))


def instant_state(table: Any, instant: str) -> str:
    return table.instant_state(instant)


def pending_stream_instants(table: Any) -> list[tuple[str, int]]:
    """(instant, checkpoint id) of every pending instant a stream coordinator created."""
    return sorted(
        (inst, int(meta[STREAM_TAG]))
        for inst, meta in table.pending_instants()
        if meta.get(STREAM_TAG) is not None
    )
