"""MOR compaction: schedule (plan + REQUESTED compaction instant) and run (merge, complete).

The compaction's requested time starts a new slice in every planned file group, so logs
that complete after it was scheduled are kept on top of the new base. As in Hudi 1.x it
is requested as `<t>.compaction.requested`, runs as `<t>.compaction.inflight` and
completes as a commit, `<t>_<c>.commit` (`compacted` set in its commit metadata).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from engine.errors import EngineError, FencedError, InstantStateError
from engine.layout.file_names import BASE, base_file_name, new_write_token
from engine.table.data_files import parquet_bytes
from engine.table.markers import CREATE
from engine.table.merge import (
    concat,
    drop_deleted,
    file_head,
    last_per_key,
    with_file_name,
)
from engine.table.operations import Operation, runs
from engine.table.stats import WriteStat
from engine.timeline.commit_metadata import CommitMetadata
from engine.timeline.instant import INFLIGHT, REQUESTED, Instant

if TYPE_CHECKING:
    from engine.table.ops import TableOps


@runs(Operation.COMPACTION)
def schedule(table: TableOps) -> Instant | None:
    if table.config.table_type != "mor":
        raise EngineError("compaction applies to mor tables only")
    with table.locked():
        table.timeline.reload()
        view = table.catalog.view()
        busy = {
            fid
            for c in table.timeline.pending("compaction")
            for fid in table.catalog.planned_file_ids(c)
        }
        plan = []
        for fid in view.file_ids():
            base, logs = view.latest(fid)
            if fid in busy or not logs:
                continue
            plan.append(
                {
                    "file_id": fid,
                    "base": base.name if base else None,
                    "logs": [log.name for log in logs],
                }
            )
        if not plan:
            return None
        generated = table.generator.generate_stamped(locked=True)
        meta = CommitMetadata(requested_seq=generated.seq, compaction_plan=plan)
        return table.timeline.create_requested("compaction", generated.time, meta)


@runs(Operation.COMPACTION)
def run(table: TableOps, t: str) -> str:
    table.timeline.reload()
    instant = table.timeline.get(t)
    if instant is None or instant.action != "compaction" or instant.is_completed:
        raise InstantStateError(f"{t} is not a pending compaction")
    requested = table.timeline.read_metadata(instant.with_state(REQUESTED))
    plan = requested.compaction_plan or []
    if instant.state == REQUESTED:
        with table.locked():
            instant = table.timeline.transition_to_inflight(instant)
        # Only the first run makes the marker directory: a later run (after a crash) finds
        # it, and a run that lost a race with a completion finds it gone and writes nothing.
        table.markers.open(t)
    key, token, schema = table.config.key_field, new_write_token(), table.schema
    stats = []
    for entry in plan:
        names = ([entry["base"]] if entry["base"] else []) + entry["logs"]
        files = [file_head(schema), *(table.catalog.read(n) for n in names)]
        name = base_file_name(entry["file_id"], token, t)
        merged = with_file_name(drop_deleted(last_per_key(concat(files), [key])), name)
        table.markers.create(t, name, CREATE)
        size = table.storage.write_verified(name, parquet_bytes(merged))
        table.catalog.cache.put(name, merged)
        stats.append(
            WriteStat(
                entry["file_id"],
                name,
                BASE,
                t,
                token,
                "compact",
                merged.num_rows,
                0,
                0,
                None,
                size,
                entry["base"],
            )
        )
    table.markers.delete_unlisted(t, [s.file_name for s in stats])  # an earlier run's files
    with table.locked():
        table.timeline.reload()
        current = table.timeline.get(t)
        if current is None or current.is_completed:
            raise InstantStateError(f"compaction {t} was completed or removed meanwhile")
        generated = table.generator.generate_stamped(locked=True)
        completion = generated.time
        meta = CommitMetadata(
            stats=stats,
            operation="compact",
            writer_id=table.writer_id,
            requested_seq=requested.requested_seq,
            completion_seq=generated.seq,
            compacted=[n for e in plan for n in ([e["base"]] if e["base"] else []) + e["logs"]],
        )
        table.timeline.complete(current.with_state(INFLIGHT), completion, meta)
    with contextlib.suppress(OSError, FencedError):  # fenced: a zombie's files stay, unread
        table.markers.finish(t, [s.file_name for s in stats])
    return completion
