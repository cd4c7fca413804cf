"""Completing an instant (Table.commit and commit_and_start, engine/table/table.py) in the
steps around the table lock: before it, what the commit lists (reconciled against the
markers, every file checked whole) and the schema; under it, the checks, the completion
time and the completed instant file, the commit point; after it, the clean-up that the
commit point makes harmless."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.errors import (
    CorruptFileError,
    EngineError,
    FencedError,
    InstantRolledBackError,
    InstantStateError,
)
from engine.table.commit_files import effective_stats, file_problem, schema_text
from engine.table.conflicts import check_occ, check_unique_keys
from engine.table.operations import Seam
from engine.table.properties import avro_schema_of, table_name
from engine.table.stats import WriteStat
from engine.timeline.commit_metadata import CommitMetadata, reserved_keys
from engine.timeline.instant import INFLIGHT, Instant
from engine.truetime import Generated

if TYPE_CHECKING:
    from engine.table.ops import TableOps

# Keys the engine writes into commit metadata; caller metadata may not override them.
RESERVED_KEYS = reserved_keys()


@dataclass(frozen=True)
class Listed:
    """What a commit lists, settled before the lock."""

    stats: list[WriteStat]  # in effect: without the flushes a later one superseded
    superseded: list[str]
    bad_files: CorruptFileError | None  # raised under the lock, after _committable's errors
    schema: str | None  # encoded; None when a file is bad
    extra: dict[str, Any]  # the caller's metadata


def before_lock(
    table: TableOps,
    t: str,
    stats: Iterable[WriteStat | dict[str, Any]],
    metadata: dict[str, Any] | None,
) -> Listed:
    """What the commit of `t` lists, settled before the lock (reserved keys refused)."""
    written = [WriteStat.coerce(s) for s in stats]
    extra = dict(metadata or {})
    clash = sorted(RESERVED_KEYS & set(extra))
    if clash:
        raise EngineError(f"commit metadata keys {clash} are reserved by the engine")
    effective, superseded = effective_stats(written, t)
    # Hudi's reconcile against markers, before the lock: the instant's files that this
    # commit does not list (failed attempts, superseded flushes, temp files) go first.
    table.markers.delete_unlisted(t, [s.file_name for s in effective])
    # Before the lock: the instant's own files (nobody else writes them; a rollback that
    # deletes them rolls the instant back first, which _committable sees under the lock,
    # so its error still comes first) and the schema.
    bad_files = file_problem(table.storage, effective)
    encoded = schema_text(table.storage, table.schema, effective) if bad_files is None else None
    return Listed(effective, superseded, bad_files, encoded, extra)


def under_lock(
    table: TableOps,
    t: str,
    listed: Listed,
    guard: Callable[[], None] | None,
    started: Mapping[str, dict[str, Any]],
    pair: bool,
) -> tuple[Instant, Generated | None]:
    """Check, then write the completed instant file. `started`: the requested metadata of
    the instants this handle started. With `pair` the same TrueTime wait also mints the
    next requested time (returned with the completed instant; else None)."""
    table.timeline.reload()
    current = _committable(table, t)
    if listed.bad_files is not None:
        raise listed.bad_files
    requested = _requested_meta(table, started, current)
    baseline = requested.occ_baseline
    _check_conflicts(table, t, baseline, listed.stats)
    if guard is not None:
        guard()
    upcoming: Generated | None = None
    if pair:
        generated, upcoming = table.generator.generate_pair(locked=True)
    else:
        generated = table.generator.generate_stamped(locked=True)
    meta = CommitMetadata(
        stats=listed.stats,
        operation=",".join(sorted({s.op for s in listed.stats})),
        writer_id=table.writer_id,
        requested_seq=requested.requested_seq,
        completion_seq=generated.seq,
        occ_baseline=baseline,
        superseded=listed.superseded,
        arrow_schema=listed.schema,
        avro_schema=avro_schema_of(listed.schema, table_name(table.storage)),
        fence=table.fence.token,  # the epoch / lock token this commit was made under
        extra=listed.extra,
    )
    done = table.timeline.complete(
        current.with_state(INFLIGHT), generated.time, meta, remove_pending_files=False
    )
    return done, upcoming


def after_lock(table: TableOps, done: Instant, stats: list[WriteStat]) -> None:
    """After the lock: the completed file is the commit point, and leftover pending
    files are harmless (the completed state wins on load); so is a stale heartbeat."""
    t = done.requested_time
    with contextlib.suppress(OSError):
        table.timeline.remove_pending(done)
    # A straggler's files, then the markers go (fenced: a zombie's stay, unread).
    with contextlib.suppress(OSError, FencedError):
        table.markers.finish(t, [s.file_name for s in stats])
    with contextlib.suppress(OSError):
        table.heartbeats.stop(t)


def _check_conflicts(table: TableOps, t: str, baseline: str | None, stats: list[WriteStat]) -> None:
    """OCC and the primary-key check against the commits since `baseline`, each unless
    switched off; then the seam where both passed and no completion time exists yet."""
    if table.safety.occ:
        check_occ(table.catalog, t, baseline, stats)
    if table.safety.pk_check:
        check_unique_keys(table.catalog, table.config.key_field, t, baseline, stats)
    table.fence.seam(Seam.AFTER_CHECKS)


def _committable(table: TableOps, t: str) -> Instant:
    if table.timeline.is_rolled_back(t):
        raise InstantRolledBackError(t)
    current = table.timeline.get(t)
    if current is None:
        raise InstantStateError(f"instant {t} is not on the timeline")
    # put_if_absent also guards the completion transition: only a pending instant may
    # complete. Without it a second writer that picked the same time silently
    # overwrites the first one's completed instant.
    if current.is_completed and table.safety.put_if_absent:
        raise InstantStateError(
            f"instant {t} is already completed at {current.completion_time}; "
            "an instant is committed at most once"
        )
    return current


def _requested_meta(
    table: TableOps, started: Mapping[str, dict[str, Any]], current: Instant
) -> CommitMetadata:
    """What the requested file says (OCC baseline, requested sequence): from memory for
    our own instants, else read once (an instant this process adopted)."""
    if current.requested_time in started:
        return CommitMetadata.from_dict(started[current.requested_time])
    return table.timeline.read_metadata(current)
