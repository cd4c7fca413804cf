"""What a table handle reads (mixed into Table, engine/table/table.py): its schema, pending
instants, file-system views and data files; snapshot, as-of and incremental reads
(engine/table/reads.py merges them)."""

from __future__ import annotations

from collections.abc import Collection, Iterable

import pyarrow as pa

from engine.config import TableConfig
from engine.layout.avro_data_block import data_columns
from engine.layout.file_names import DataFile, parse_data_file
from engine.layout.file_slices import FileSystemView
from engine.storage import Storage
from engine.table.catalog import Catalog
from engine.table.data_files import file_rows
from engine.table.properties import decode_schema
from engine.table.reads import read_incremental, read_view
from engine.timeline.active import ActiveTimeline
from engine.timeline.instant import DATA_ACTIONS, Instant


class TableReads:
    """The read side of a Table: the attributes declared here are the ones Table sets."""

    storage: Storage
    config: TableConfig
    timeline: ActiveTimeline
    catalog: Catalog
    # Set by `open` for a table Apache Hudi wrote (its merge mode): read, never written.
    hudi_merge_mode: str | None
    _declared_schema: pa.Schema | None
    _learned_schema: pa.Schema | None

    # -- state ---------------------------------------------------------------------------

    @property
    def schema(self) -> pa.Schema | None:
        """The declared schema, else the one the latest commit recorded (None before any)."""
        if self._declared_schema is not None:
            return self._declared_schema
        if self._learned_schema is None:  # schemas do not evolve: learn it once
            for instant in reversed(self.timeline.completed(include_archived=True)):
                if instant.action in DATA_ACTIONS:
                    meta = self.timeline.read_metadata(instant)
                    if meta.arrow_schema:
                        self._learned_schema = decode_schema(meta.arrow_schema)
                        break
                    if meta.avro_schema:  # a commit of Apache Hudi's writer
                        self._learned_schema = data_columns(meta.avro_schema)
                        break
        return self._learned_schema

    def pending_instants(self) -> list[Instant]:
        return self.timeline.reload().pending()

    def view(self, as_of: str | None = None) -> FileSystemView:
        self.timeline.reload()
        return self.catalog.view(as_of)

    def data_files(self) -> list[DataFile]:
        """Every data file in the table folder (visible or not)."""
        return [f for f in map(parse_data_file, self.storage.list("")) if f is not None]

    def orphan_files(self) -> list[DataFile]:
        """Data files no completed instant references and no pending instant may still claim."""
        self.timeline.reload()
        referenced = {
            f.name
            for i in self.timeline.completed(include_archived=True)
            for f in self.catalog.files_of(i)
        }
        pending = {i.requested_time for i in self.timeline.pending()}
        return [
            f for f in self.data_files() if f.name not in referenced and f.instant not in pending
        ]

    # -- reads ---------------------------------------------------------------------------

    def snapshot(
        self,
        columns: list[str] | None = None,
        with_meta: bool = False,
        file_ids: Iterable[str] | None = None,
        leave_out: Collection[str] = (),
    ) -> pa.Table:
        """The latest committed state (of only some file groups with `file_ids`; without
        the log files `leave_out`: FileSystemView.without_logs)."""
        return self._read(self.view().without_logs(leave_out), columns, with_meta, file_ids)

    def as_of(
        self,
        completion_time: str,
        columns: list[str] | None = None,
        with_meta: bool = False,
        file_ids: Iterable[str] | None = None,
        leave_out: Collection[str] = (),
    ) -> pa.Table:
        """The state made of instants completed at or before `completion_time` (of only
        some file groups with `file_ids`: the pieces a distributed reader reads; without
        the log files `leave_out`: FileSystemView.without_logs)."""
        view = self.view(as_of=completion_time).without_logs(leave_out)
        return self._read(view, columns, with_meta, file_ids)

    def _read(
        self,
        view: FileSystemView,
        columns: list[str] | None,
        with_meta: bool,
        file_ids: Iterable[str] | None,
    ) -> pa.Table:
        key, schema, ordering = self.config.key_field, self.schema, self._event_time_ordering
        return read_view(self.catalog, view, key, schema, columns, with_meta, file_ids, ordering)

    @property
    def _event_time_ordering(self) -> str | None:
        """The ordering field a table Hudi wrote in EVENT_TIME_ORDERING merges by; None for
        the engine's own tables, whose later commit wins (COMMIT_TIME_ORDERING)."""
        if self.hudi_merge_mode != "EVENT_TIME_ORDERING":
            return None
        return self.config.ordering_field

    def file_ids(self, as_of: str | None = None) -> list[str]:
        return self.view(as_of).file_ids()

    def stored_rows(self, as_of: str | None = None) -> int:
        """Rows stored in the files a snapshot reads (Parquet footers, delete blocks' keys; an
        upper bound on the rows it returns): how big a full read would be."""
        view = self.view(as_of)
        total = 0
        for fid in view.file_ids():
            base, logs = view.latest(fid)
            for f in ([base] if base is not None else []) + logs:
                total += file_rows(self.storage, f.name)
        return total

    def incremental(
        self,
        begin_exclusive: str | None,
        end_inclusive: str | None = None,
        columns: list[str] | None = None,
        with_meta: bool = False,
        include_deletes: bool = False,
    ) -> pa.Table:
        """Rows written by data instants that completed in (begin, end], latest version per
        key. MOR delete markers appear only with include_deletes=True (then `_hoodie_is_deleted`
        is among the columns)."""
        self.timeline.reload()
        instants = [
            i
            for i in self.timeline.completed_in(begin_exclusive, end_inclusive)
            if i.action in DATA_ACTIONS
        ]
        return read_incremental(
            self.catalog,
            instants,
            self.config.key_field,
            self.schema,
            columns,
            with_meta or include_deletes,
            include_deletes,
            self._event_time_ordering,
        )
