"""The two readers the hudi_reader check compares, over one engine table: the engine's own
reads and hudi-rs's (Apache Hudi's native reader, the `hudi` package), and whether a table
hudi-rs cannot open counts against the engine."""

from __future__ import annotations

from collections.abc import Callable

import pyarrow as pa
import pyarrow.fs as pafs
from hudi import HudiQueryType, HudiReadOptions, HudiTableBuilder
from hudi import __version__ as hudi_version

from engine.layout.file_names import LOG
from engine.table import Table
from engine.table.merge import COMMIT_TIME
from engine.timeline.instant import DATA_ACTIONS
from harness.checks.hudi_exclusions import Misfiled, misfiled_logs
from harness.checks.hudi_read_plan import Completed, read_limits
from harness.checks.hudi_reader import NAME, hudi_reader
from harness.checks.result import CheckResult

PROPERTIES = ".hoodie/hoodie.properties"
# Actions whose files a snapshot reads (a compaction completes as Hudi's `commit`).
VIEW_ACTIONS = (*DATA_ACTIONS, "compaction")
READER = f"hudi-rs {hudi_version}"
# hudi-rs's default start of an incremental range (before every instant time).
EARLIEST = "19700101000000000"


def compared_columns(schema: pa.Schema | None, key: str) -> list[str]:
    """The key, the commit time (which instant's row a reader returns: the readers must
    agree on it too, and an exclusion is confirmed by it) and every data column but binary
    ones (the payload: large, and the event id already tells one version of a row from
    another)."""
    if schema is None:
        return [key, COMMIT_TIME]
    rest = [
        f.name
        for f in schema
        if f.name != key and not f.name.startswith("_hoodie_") and not pa.types.is_binary(f.type)
    ]
    return [key, COMMIT_TIME, *rest]


def hudi_table_version(table: Table) -> str | None:
    """`hoodie.table.version` from the properties file (key=value lines), or None when the
    file does not say (an older instantbench table stored JSON)."""
    try:
        text = table.storage.read_bytes(PROPERTIES).decode()
    except (OSError, UnicodeDecodeError):
        return None
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        if sep and name.strip() == "hoodie.table.version":
            return value.strip()
    return None


class EngineReads:
    def __init__(self, table: Table, columns: list[str]) -> None:
        self.table, self.columns = table, columns

    def snapshot(self) -> pa.Table:
        return self.table.snapshot(columns=self.columns)

    def as_of(self, time: str) -> pa.Table:
        return self.table.as_of(time, columns=self.columns)

    def incremental(self, begin: str | None, end: str | None) -> pa.Table:
        return self.table.incremental(begin, end, columns=self.columns)

    def without(self, as_of: str | None, file_id: str, logs: frozenset[str]) -> pa.Table:
        group = [file_id]
        if as_of is None:
            return self.table.snapshot(self.columns, file_ids=group, leave_out=logs)
        return self.table.as_of(as_of, self.columns, file_ids=group, leave_out=logs)


class HudiReads:
    """hudi-rs's reads: time travel by requested time, incremental pulls by completion time."""

    def __init__(self, uri: str, columns: list[str]) -> None:
        self.hudi = HudiTableBuilder.from_base_uri(uri).build()
        self.columns = columns

    def _read(self, options: HudiReadOptions) -> pa.Table:
        batches = self.hudi.read(options)
        if not batches:
            return pa.table({c: pa.array([], pa.null()) for c in self.columns})
        return pa.Table.from_batches(batches).select(self.columns)

    def _options(self) -> HudiReadOptions:
        return HudiReadOptions(projection=self.columns)

    def snapshot(self) -> pa.Table:
        return self._read(self._options())

    def as_of(self, time: str) -> pa.Table:
        return self._read(self._options().with_as_of_timestamp(time))

    def incremental(self, begin: str | None, end: str | None) -> pa.Table:
        """(begin, end]; no end: up to the latest commit."""
        options = self._options().with_query_type(HudiQueryType.Incremental)
        options = options.with_start_timestamp(begin or EARLIEST)
        return self._read(options if end is None else options.with_end_timestamp(end))


def completed_instants(table: Table) -> list[Completed]:
    """The table's completed instants whose files a reader reads."""
    timeline = table.timeline.reload()
    active = {i.requested_time for i in timeline.completed()}
    return [
        Completed(
            i.requested_time,
            i.completed_at,
            i.action,
            data=i.action in DATA_ACTIONS,
            groups=frozenset(f.file_id for f in table.catalog.files_of(i)),
            archived=i.requested_time not in active,
        )
        for i in timeline.completed(include_archived=True)
        if i.action in VIEW_ACTIONS
    ]


def group_keys(
    table: Table, cleaned: frozenset[str]
) -> Callable[[Completed, str], tuple[pa.Array, frozenset[str]] | None]:
    """keys(instant, group): the keys an instant wrote into a file group and the names of
    the log files it wrote them in, None if it wrote none there or its files there are ones
    a clean may have deleted (`cleaned`: by design, no compared read holds their rows, and
    reading them fails)."""
    key = table.config.key_field
    by_time = {i.requested_time: i for i in table.timeline.completed(include_archived=True)}

    def keys(instant: Completed, group: str) -> tuple[pa.Array, frozenset[str]] | None:
        files = [
            f
            for f in table.catalog.files_of(by_time[instant.requested])
            if f.file_id == group and f.name not in cleaned
        ]
        if not files:
            return None
        parts = [table.catalog.read_keys(f, key) for f in files]
        logs = frozenset(f.name for f in files if f.kind == LOG)
        return pa.chunked_array(parts).combine_chunks().unique(), logs

    return keys


def misfiled_keys(
    table: Table, instants: list[Completed], cleaned: frozenset[str]
) -> list[Misfiled]:
    """The keys of archived log writes hudi-rs files under an older slice than the engine
    (harness/checks/hudi_reader.py, "Archived log writes")."""
    keys = group_keys(table, cleaned)
    out = []
    for log, group, straddled, absorbed in misfiled_logs(instants):
        written = keys(log, group)
        if written is not None and len(written[0]):
            out.append(Misfiled(group, log, straddled, absorbed, *written))
    return out


def check_table(table: Table, window_from: str | None, cleaned: frozenset[str]) -> CheckResult:
    """hudi_reader on an engine table. hudi-rs failing to open a table whose properties
    name a Hudi table version is `invalid` (the engine writes Hudi tables, which every Hudi
    reader must open); a table without one is not in Hudi's format at all: `unknown`.
    `window_from`, `cleaned`: the cleaner's window as the judge recomputed it (harness/
    checks/retention.py) and the files a clean may have deleted."""
    key = table.config.key_field
    columns = compared_columns(table.schema, key)
    version = hudi_table_version(table)
    uri = table.storage.root
    if not isinstance(table.storage.filesystem, pafs.LocalFileSystem):
        return CheckResult(
            NAME, "unknown", {"reason": f"hudi-rs is run on local tables only ({uri})"}
        )
    try:
        hudi = HudiReads(uri, columns)
    except Exception as e:
        error = f"{type(e).__name__}: {e}"
        if version is None:
            reason = f"{PROPERTIES} names no hoodie.table.version: not a Hudi table"
            return CheckResult(
                NAME, "unknown", {"reader": READER, "reason": reason, "error": error}
            )
        return CheckResult(
            NAME,
            "invalid",
            {"reader": READER, "table_version": version, "open_error": error},
        )
    instants = completed_instants(table)
    result = hudi_reader(
        instants,
        EngineReads(table, columns),
        hudi,
        key,
        READER,
        read_limits(table.stored_rows()),
        window_from,
        misfiled_keys(table, instants, cleaned),
    )
    return CheckResult(NAME, result.verdict, {"table_version": version, **result.evidence})
