"""BaseAppender: a COW insert's base file written flush by flush, one row group each.

A stream's writer task that inserts into a copy-on-write table (append mode) writes one
new file group per instant: each flush encodes its rows as one more row group of the
task's open file, which the checkpoint barrier closes. This is Hudi's Flink append mode
(`AppendWriteFunction`: one `BulkInsertWriterHelper` per checkpoint keeps its Parquet
files open across records, `snapshotState` closes them and sends the one write status of
the checkpoint); the alternative, a new file per flush (`write_files`), pays per flush
a marker, a file's open, footer, rename and size check, and an event to the
coordinator: at a flush of a tenth of a batch that was a third of the raw Parquet sink's
whole write.

Crash safety is the marker protocol's: the file is recorded by its marker before its
first byte, and written in the instant's marker directory until `close` renames it into
place (Storage.open_write). So a reader that lists the table never sees an unclosed file;
a writer that dies between flushes leaves a temp file that the commit's reconcile, a
rollback or failed-write cleaning removes with the directory (its marker names a file
that never landed); and a writer that outlives its instant (completed or rolled back:
the directory sealed) fails at close instead of landing a file nobody lists. Nothing
about the file is reported before it is closed, so the coordinator never holds a write
status of an unfinished file: a task attempt that fails reports nothing, and its retry
starts a new file.
"""

from __future__ import annotations

import uuid

import pyarrow as pa
import pyarrow.parquet as pq

from engine.config import TableConfig
from engine.layout.file_names import base_file_name, check_token
from engine.storage import OpenWrite, Storage
from engine.table.data_files import parquet_writer
from engine.table.markers import CREATE, Markers
from engine.table.merge import add_meta, precombine
from engine.table.stats import WriteStat
from engine.table.writer import conform


class BaseAppender:
    """One new file group of `instant` (`ap-<hex>`, as write_files' append mode names
    them), written by `write` (one row group per call) and published by `close`."""

    def __init__(
        self,
        storage: Storage,
        markers: Markers,
        config: TableConfig,
        schema: pa.Schema | None,
        instant: str,
        write_token: str,
    ) -> None:
        self.storage, self.markers, self.config, self.schema = storage, markers, config, schema
        self.instant = instant
        self.write_token = check_token(write_token)
        self.file_id = f"ap-{uuid.uuid4().hex[:12]}"
        self.file_name = base_file_name(self.file_id, self.write_token, instant)
        self.rows = 0  # rows written so far (the next row's seqno number)
        self._new_keys: list | None = [] if config.index == "dynamic" else None
        self._file: OpenWrite | None = None
        self._writer: pq.ParquetWriter | None = None

    @property
    def bytes_written(self) -> int:
        """Bytes encoded so far (the footer comes at close)."""
        return self._file.stream.tell() if self._file is not None else 0

    def write(self, records: pa.Table) -> int:
        """Validate and deduplicate `records` as write_files does for an insert, then write
        them as one row group; returns the rows written. The first write records the
        marker and opens the file."""
        key = self.config.key_field
        records = precombine(
            conform(records, self.schema, key, "insert"), key, self.config.ordering_field
        )
        if records.num_rows == 0:
            return 0
        # The file's flush number is 0: its rows number on across row groups instead.
        table = add_meta(records, key, self.instant, 0, self.file_name, self.rows, dictionary=True)
        if self._writer is None:
            self.markers.create(self.instant, self.file_name, CREATE)
            self._file = self.storage.open_write(
                self.file_name, self.markers.staging_dir(self.instant)
            )
            self._writer = parquet_writer(table.schema, self._file.stream)
            # A table without a schema yet: the file's first rows set it for the later row
            # groups (conform then casts safely or names the mismatch).
            self.schema = self.schema or records.schema
        self._writer.write_table(table)
        if self._new_keys is not None:
            self._new_keys += records.column(key).to_pylist()
        self.rows += records.num_rows
        return records.num_rows

    def close(self) -> WriteStat | None:
        """Finish the file (footer) and publish it; its write stat, None if nothing was
        written. Raises if the instant's marker directory was sealed meanwhile."""
        if self._writer is None or self._file is None:
            return None
        try:
            self._writer.close()
            size = self._file.close()
        except BaseException:
            self._file.abort()
            raise
        return WriteStat.appended(
            self.file_id,
            self.file_name,
            self.instant,
            self.write_token,
            self.rows,
            size,
            self._new_keys,
        )

    def abort(self) -> None:
        """Drop the unfinished file (its marker stays: the commit's reconcile or a rollback
        finds nothing to delete)."""
        if self._file is not None:
            self._file.abort()
        self._writer = self._file = None
