"""The few table operations the stream uses, in one place (see engine/README.md)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from engine.errors import CorruptFileError, DuplicateKeyError, WriteConflictError
from engine.locks.service import SERVICE_LOCK, LeaseLock, LockService, service_first_token
from engine.table import Table
from engine.table.appender import BaseAppender
from engine.table.fence_domains import current_epoch, epoch_domain, epoch_scope
from engine.timeline.instant import REQUESTED, Instant

# Marks the instants a stream coordinator created, so recovery never touches instants of
# batch writers that share the table.
STREAM_TAG = "stream_checkpoint_id"

COMPLETED = "completed"
PENDING = "pending"
ROLLED_BACK = "rolled_back"
MISSING = "missing"

# Commit errors that no retry can cure: the instant is rolled back (Hudi: failed write
# statuses -> rollback and fail the job).
PERMANENT_COMMIT_ERRORS = (CorruptFileError, WriteConflictError, DuplicateKeyError)


def fenced_by(epoch: int | None) -> contextlib.AbstractContextManager[None]:
    """Table operations in this block are fenced by coordinator `epoch` (None: unfenced)."""
    return contextlib.nullcontext() if epoch is None else epoch_scope(epoch)


def enter_epoch(table: Table, epoch: int) -> None:
    """This table handle belongs to coordinator `epoch` (also its other users, such as a
    compaction service sharing it)."""
    table.fence.domain = epoch_domain(epoch)
    # A lease held under this coordinator's own identity is a predecessor's: it crashed
    # or is a zombie whose epoch this one just sealed. Take it over without waiting out
    # its lease (the takeover seals that hold's grant too). Only while this epoch is the
    # newest: a resumed zombie sees its successor's lease under the same identity, and
    # taking it would seal the live coordinator's hold. The epoch is read after the
    # lease (the lock calls this with the record it just read), and a successor takes
    # its epoch before it takes the lock, so a lease a successor wrote is never "dead"
    # to a zombie; one written after our read fails our compare-and-swap.
    owner, storage = table.lock.holder_id, table.storage
    table.lock.known_dead = lambda lease: (
        lease.get("owner") == owner and current_epoch(storage) <= epoch
    )


def serve_table_lock(table: Table, epoch: int, lease_s: float) -> LockService:
    """The lock service of coordinator `epoch` for its table, which from now on locks
    through it in-process; a lease that ran out unreleased is revoked (its grant sealed)
    before the lock is granted again."""
    service = LockService(on_takeover=table.fence.revoke, first_token=service_first_token(epoch))
    lock = LeaseLock(service, SERVICE_LOCK, holder_id=table.writer_id, lease_s=lease_s)
    table.lock = table.generator.lock = lock
    return service


def _instant_meta(checkpoint_id: int, epoch: int) -> dict[str, Any]:
    return {STREAM_TAG: checkpoint_id, "coordinator_epoch": epoch}


def _timing(inst: Instant) -> dict[str, float | None]:
    timing = inst.timing
    return {
        "lock_wait_ms": timing.lock_wait_ms if timing else None,
        "truetime_sleep_ms": timing.truetime_sleep_ms if timing else None,
    }


def start_instant(
    table: Table, checkpoint_id: int, epoch: int, fence: int | None = None
) -> tuple[str, dict[str, float | None]]:
    """REQUESTED -> INFLIGHT under the table lock with TrueTime; returns (time, timing)."""
    with fenced_by(fence):
        inst = table.start_instant(metadata=_instant_meta(checkpoint_id, epoch))
    return inst.requested_time, _timing(inst)


def write_files(
    table: Table, instant: str, records: pa.Table, op: str, token: str, prior: list[dict]
) -> list[dict[str, Any]]:
    stats = table.write_files(instant, records, op=op, write_token=token, prior=prior)
    return [s.to_dict() for s in stats]


def open_appender(table: Table, instant: str, token: str) -> BaseAppender:
    return table.open_appender(instant, token)


def commit(
    table: Table,
    instant: str,
    stats: list[dict[str, Any]],
    metadata: dict[str, Any],
    guard: Callable[[], None] | None,
    fence: int | None = None,
) -> str:
    with fenced_by(fence):
        return table.commit(instant, stats, metadata=metadata, guard=guard)


def commit_and_start(
    table: Table,
    instant: str,
    stats: list[dict[str, Any]],
    metadata: dict[str, Any],
    guard: Callable[[], None] | None,
    next_checkpoint_id: int,
    epoch: int,
    fence: int | None = None,
) -> tuple[str, tuple[str, dict[str, float | None]] | None]:
    """`commit`, then in the same lock hold and TrueTime wait the instant of
    `next_checkpoint_id` (engine/truetime.py: shared wait). Returns (completion time,
    (next instant, timing) or None if only starting it failed)."""
    with fenced_by(fence):
        completion, started = table.commit_and_start(
            instant, stats, metadata, guard, _instant_meta(next_checkpoint_id, epoch)
        )
    return completion, None if started is None else (started.requested_time, _timing(started))


def rollback(table: Table, instant: str, fence: int | None = None) -> None:
    with fenced_by(fence):
        table.rollback(instant)


def adopt(table: Table, instant: str) -> None:
    """Keep a restored pending instant's heartbeat alive, so no lazy cleaner rolls it back."""
    table.heartbeat(instant)


def release(table: Table, instant: str) -> None:
    """Stop the heartbeat of an instant left inflight: lazy cleaning may roll it back."""
    table.heartbeats.stop(instant, delete=False)


def instant_state(table: Table, instant: str) -> str:
    timeline = table.timeline.reload()
    current = timeline.get(instant)
    if current is not None:
        return COMPLETED if current.is_completed else PENDING
    return ROLLED_BACK if timeline.is_rolled_back(instant) else MISSING


def pending_stream_instants(table: Table) -> list[tuple[str, int]]:
    """(instant, checkpoint id) of every pending instant a stream coordinator created."""
    out = []
    for inst in table.pending_instants():
        # The requested file holds the metadata; reading an (empty) inflight file raises.
        ckp = table.timeline.read_metadata(inst.with_state(REQUESTED)).extra.get(STREAM_TAG)
        if ckp is not None:
            out.append((inst.requested_time, int(ckp)))
    return sorted(out)
