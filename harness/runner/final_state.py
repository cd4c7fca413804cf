"""What the table holds at the end of a run, read once for all checks."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds

from engine.errors import CorruptInstantError
from engine.layout.file_names import data_file
from engine.stream.table_port import STREAM_TAG
from engine.table import Table, cleaning
from engine.timeline import ActiveTimeline, CommitMetadata
from engine.timeline.instant import COMMIT_ACTIONS, Instant
from engine.timeline.sequence import StoredLastGenerated, generated_times
from harness.checks.retention import clean_boundaries, window_start
from harness.pipeline.checkpoints import read_checkpoint
from harness.pipeline.events import SCHEMA
from harness.runner.rundir import RunPaths
from harness.scenario import Scenario

READ_COLUMNS = ["id", "event_id", "account", "amount"]


@dataclass(frozen=True)
class Retention:
    """The cleaner's window as the judge recomputes it (harness/checks/retention.py): where
    it starts, and the files some clean was allowed to delete (superseded as of a clean's
    boundary, and in no latest slice now)."""

    start: str | None = None
    deletable: frozenset[str] = frozenset()


@dataclass
class FinalState:
    read_rows: Callable[[], pa.Table]  # the latest snapshot (stream rows have event_id >= 0)
    table: Table | None = None  # None for the raw_parquet sink
    instants: list[dict[str, Any]] = field(default_factory=list)
    retention: Retention = field(default_factory=Retention)
    orphan_files: list[str] = field(default_factory=list)
    # The generation sequence's final record: {"time", "seq"}, {"error"}, or None if absent.
    last_generated: dict[str, Any] | None = None
    _rows: pa.Table | None = None

    @property
    def rows(self) -> pa.Table:
        """Read on first use: checks that run on Spark never load the table here."""
        if self._rows is None:
            self._rows = self.read_rows()
        return self._rows


def _raw_rows(paths: RunPaths) -> pa.Table:
    """The ceiling sink's rows: every file of every batch Spark's commit log records."""
    committed_batches = read_checkpoint(paths.checkpoint).committed_ids()
    root = paths.table / "raw"
    files = [
        str(p)
        for p in sorted(root.glob("batch=*/*.parquet"))
        if int(p.parent.name.split("=")[1]) in committed_batches
    ]
    if not files:
        return SCHEMA.empty_table().select(READ_COLUMNS)
    return ds.dataset(files, schema=SCHEMA, format="parquet").to_table(columns=READ_COLUMNS)


def _metadata(table: Table, instant: Instant, archived: bool = False) -> CommitMetadata | None:
    """An instant's metadata, None where it cannot be read. `archived`: the archived copy's
    of an instant also completed on the active timeline (which read_metadata would read);
    of two archived completions only the one the archive keeps is readable."""
    try:
        if not archived:
            return table.timeline.read_metadata(instant)
        archive = table.timeline.archive
        if archive.get(instant.requested_time) != instant:
            return None
        raw = archive.metadata_bytes(instant.requested_time)
        return CommitMetadata.from_avro_bytes(raw, f"archived {instant.file_name}")
    except (OSError, KeyError, CorruptInstantError):
        return None


def _generated(table: Table, instant: Instant, archived: bool = False) -> list[dict[str, Any]]:
    """The times an instant's files record with their generation sequence numbers (None
    where a file records none or cannot be read: the checker treats that as unknown)."""
    return generated_times(instant, _metadata(table, instant, archived))


def _completions(timeline: ActiveTimeline) -> dict[str, list[tuple[Instant, bool]]]:
    """Every completion of each requested time as (instant, archived): the active
    timeline's completed files (two for one time: a collision) and every archived row (one
    archived and one active: completed again after its archival). One completion archived
    and still active (a crash between archiving and removing the active file) is one."""
    active = [*timeline.completed(), *chain(*timeline.duplicated_times().values())]
    found: dict[str, dict[str | None, tuple[Instant, bool]]] = defaultdict(dict)
    for instant, archived in [
        *((i, False) for i in active),
        *((i, True) for i in timeline.archive.rows()),
    ]:
        found[instant.requested_time].setdefault(instant.completion_time, (instant, archived))
    return {t: list(c.values()) for t, c in found.items()}


def _last_generated(table: Table) -> dict[str, Any] | None:
    try:
        last = StoredLastGenerated(table.storage).load()
    except CorruptInstantError as e:
        return {"error": str(e)}
    return None if last is None else {"time": last.time, "seq": last.seq}


def _stream_checkpoint(table: Table, instant: Instant) -> int | None:
    """The checkpoint id a completed stream commit records (None for any other instant)."""
    if not instant.is_completed or instant.action not in ("commit", "deltacommit"):
        return None
    try:
        ckp = table.timeline.read_metadata(instant).extra.get(STREAM_TAG)
    except (OSError, KeyError, CorruptInstantError):
        return None  # unreadable: not judged (its times are already unnumbered evidence)
    return None if ckp is None else int(ckp)


def _cow_bases(table: Table, instant: Instant) -> list[dict[str, Any]]:
    """The base files a completed COW commit wrote and the file each one merged (its write
    stats): the timeline check's lost-update evidence."""
    if not instant.is_completed or instant.action != "commit":
        return []
    out = []
    for stat in table.timeline.read_metadata(instant).stats:
        if stat.kind != "base":
            continue
        prev = stat.prev_file
        out.append(
            {
                "file_id": stat.file_id,
                "file_name": stat.file_name,
                "prev_file": prev,
                "prev_same_instant": prev is not None
                and data_file(prev).instant == instant.requested_time,
            }
        )
    return out


def _files(table: Table, instant: Instant) -> list[str]:
    """The data files a completed data write or compaction owns (its commit metadata's):
    the timeline check's orphan rule takes rows of any other file as a dirty read."""
    if not instant.is_completed or instant.action not in COMMIT_ACTIONS:
        return []
    return [f.name for f in table.catalog.files_of(instant)]


def retention_of(table: Table, retain_commits: int) -> Retention:
    """The cleaner's window of `table` under `retain_commits`, recomputed."""
    timeline = table.timeline.reload()
    rolled_back = timeline.rolled_back()
    listed = [
        {
            "requested": i.requested_time,
            "completed": i.completion_time,
            "action": i.action,
            "state": i.state,
            "rolled_back": i.requested_time in rolled_back,
        }
        for i in timeline.instants() + timeline.completed(include_archived=True)
    ]
    boundaries = clean_boundaries(listed, retain_commits)
    superseded = set().union(
        *(cleaning.superseded_files(table.catalog.view(as_of=b)) for b in boundaries)
    )
    latest = cleaning.latest_files(table.view())
    return Retention(window_start(boundaries), frozenset(superseded - latest))


def _timeline_instants(
    table: Table, deletable: frozenset[str] = frozenset()
) -> list[dict[str, Any]]:
    """`deletable`: files a clean may have deleted (gone by design; none by default)."""
    timeline = table.timeline.reload()
    rolled_back = timeline.rolled_back()
    # Two completions for one requested time: the instant was committed twice.
    completions = _completions(timeline)
    out = []
    for instant in timeline.instants() + timeline.completed(include_archived=True):
        generated = _generated(table, instant)
        owned = _files(table, instant)
        own = completions.get(instant.requested_time, [])
        for twin, archived in own:
            if twin.completion_time != instant.completion_time:
                generated += _generated(table, twin, archived)  # each was a generation
                meta = _metadata(table, twin, archived)
                owned += [s.file_name for s in meta.stats] if meta else []
        missing: list[str] = []
        if instant.is_completed and instant.action != "rollback":
            missing = [
                f.name
                for f in table.catalog.files_of(instant)
                if f.name not in deletable and not table.storage.exists(f.name)
            ]
        out.append(
            {
                "requested": instant.requested_time,
                "completed": instant.completion_time,
                "action": instant.action,
                "state": instant.state,
                "files_exist": not missing,
                "missing_files": missing,
                "rolled_back": instant.requested_time in rolled_back,
                "completions": len(own),
                "completion_times": sorted(str(t.completion_time) for t, _ in own),
                "generated": generated,
                "files": owned,
                "writes": _cow_bases(table, instant),
                "stream_checkpoint": _stream_checkpoint(table, instant),
            }
        )
    # An archived instant can also be listed by the active timeline: keep one of each.
    unique = {(i["requested"], i["action"], i["state"]): i for i in out}
    return list(unique.values())


def read_final_state(scenario: Scenario, paths: RunPaths) -> FinalState:
    if scenario.engine.sink == "raw_parquet":
        return FinalState(read_rows=lambda: _raw_rows(paths))
    table = Table.open(str(paths.table), writer_id="checker")
    window = retention_of(table, scenario.table.services.clean_retain_commits)
    return FinalState(
        read_rows=lambda: table.snapshot(columns=READ_COLUMNS),
        table=table,
        retention=window,
        instants=_timeline_instants(table, window.deletable),
        orphan_files=[f.name for f in table.orphan_files()],
        last_generated=_last_generated(table),
    )
