"""write_files: validate, route rows to file groups, and write base or log files.

COW upsert/delete merge each touched group's latest slice (or this instant's earlier
file for that group, for a second eager flush) with the batch into a new base file.
COW insert is append mode: one new file group per call, no merge, never conflicts.
MOR appends one log file per touched group. All of it vectorised with pyarrow/numpy.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.config import TableConfig
from engine.errors import MissingKeyColumnError, SchemaMismatchError
from engine.layout.file_names import (
    BASE,
    LOG,
    base_file_name,
    check_token,
    log_file_name,
    new_write_token,
)
from engine.layout.file_slices import FileSystemView
from engine.layout.index import DynamicIndex, Route, bucket_file_id, route_bucket
from engine.storage import Storage
from engine.table.avro_schema import avro_schema_json
from engine.table.catalog import Catalog
from engine.table.data_files import (
    data_log_bytes,
    delete_log_bytes,
    delete_markers,
    delete_ordering,
    log_header,
    parquet_encoder,
)
from engine.table.markers import APPEND, CREATE, MERGE, Markers
from engine.table.merge import (
    META_COLUMNS,
    META_FIELDS,
    add_meta,
    concat,
    precombine,
    with_file_name,
)
from engine.table.properties import table_name
from engine.table.stats import WriteStat

OPS = ("insert", "upsert", "delete")


def conform(records: pa.Table, schema: pa.Schema | None, key: str, op: str) -> pa.Table:
    """Check the key column and the schema; cast to the table schema (safe casts only)."""
    if key not in records.column_names:
        raise MissingKeyColumnError(
            f"records have no key column {key!r}; columns: {records.column_names}"
        )
    if records.column(key).null_count:
        raise MissingKeyColumnError(
            f"{records.column(key).null_count} record(s) have a null {key!r}"
        )
    meta = [c for c in records.column_names if c in META_COLUMNS]
    if meta:
        raise SchemaMismatchError(f"records must not carry engine meta columns {meta}")
    if op == "delete":
        records = records.select([key])
        fields = [schema.field(key)] if schema is not None else []
    else:
        if schema is None:
            return records
        missing = [n for n in schema.names if n not in records.column_names]
        extra = [n for n in records.column_names if n not in schema.names]
        if missing or extra:
            raise SchemaMismatchError(
                f"records do not match the table schema: missing columns {missing},"
                f" unknown columns {extra}; table schema: {schema}"
            )
        records = records.select(schema.names)
        fields = list(schema)
    columns = []
    for f in fields:
        col = records.column(f.name)
        if col.type != f.type:
            try:
                col = col.cast(f.type, safe=True)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise SchemaMismatchError(
                    f"column {f.name!r} has type {col.type}, the table has {f.type}: {e}"
                ) from None
        columns.append(col)
    return pa.table(columns, names=[f.name for f in fields]) if fields else records


class FileWriter:
    def __init__(
        self,
        storage: Storage,
        catalog: Catalog,
        config: TableConfig,
        writer_id: str,
        markers: Markers | None = None,
    ):
        self.storage, self.catalog, self.config, self.writer_id = (
            storage,
            catalog,
            config,
            writer_id,
        )
        self.markers = markers or Markers(storage, enabled=False)  # recorded before each write
        self._pool = ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1))
        self._index: tuple[FileSystemView, DynamicIndex] | None = None
        # Dynamic index: new keys to their bucket's group, the rule a stream's routing
        # applies before its tasks write (Table(new_keys_by_bucket=True)).
        self.new_keys_by_bucket = False

    def write(
        self,
        instant: str,
        records: pa.Table,
        op: str,
        write_token: str | None,
        prior: Iterable[WriteStat],
        schema: pa.Schema | None,
    ) -> list[WriteStat]:
        if op not in OPS:
            raise ValueError(f"op must be one of {OPS}, got {op!r}")
        token = check_token(write_token) if write_token is not None else new_write_token()
        prior = [s for s in prior if s.instant == instant]
        key = self.config.key_field
        records = precombine(conform(records, schema, key, op), key, self.config.ordering_field)
        if records.num_rows == 0:
            return []
        view = self.catalog.view()
        if self.config.table_type == "cow" and op == "insert":
            return [self._append(instant, records, token)]
        route = self._route(records, op, view)
        mor = self.config.table_type == "mor"
        log = self._log_format(instant, schema or records.schema) if mor else None
        jobs: list[tuple[Callable[..., WriteStat | None], tuple[object, ...]]] = []
        for code, rows, new in _partition(records, route):
            fid = route.file_ids[code]
            new_keys = (
                rows.column(key).filter(pa.array(new)).to_pylist() if new is not None else None
            )
            before = [s for s in prior if s.file_id == fid]
            if self.config.table_type == "cow":
                jobs.append(
                    (self._merge_base, (instant, fid, rows, op, token, before, view, new_keys))
                )
            else:
                jobs.append(
                    (self._append_log, (instant, fid, rows, op, token, before, new_keys, log))
                )
        if len(jobs) == 1:
            results = [jobs[0][0](*jobs[0][1])]
        else:
            results = list(self._pool.map(lambda job: job[0](*job[1]), jobs))
        return [s for s in results if s is not None]

    # -- routing -------------------------------------------------------------------------

    def _route(self, records: pa.Table, op: str, view: FileSystemView) -> Route:
        keys = records.column(self.config.key_field)
        if self.config.index == "bucket":
            return route_bucket(keys, self.config.file_groups)
        index = self._dynamic_index(view)
        buckets = self.config.file_groups if self.new_keys_by_bucket else None
        if op == "insert":  # inserts skip the lookup: every key is new
            if buckets is None:
                codes = np.full(len(keys), index.group_for_new(self.writer_id), dtype=np.int64)
            else:
                codes = index.bucket_codes(keys, buckets)
            return Route(list(index.file_ids), codes, np.ones(len(keys), dtype=bool))
        route = index.route(keys, self.writer_id, buckets)
        if op == "delete":  # deleting unknown keys is a no-op
            route.codes[route.new] = -1
            route.new = None
        return route

    def _dynamic_index(self, view: FileSystemView) -> DynamicIndex:
        cached = self._index
        if cached is not None and cached[0] is view:
            return cached[1]
        index = dynamic_index(self.catalog, view, self.config)
        self._index = (view, index)
        return index

    # -- writing -------------------------------------------------------------------------

    def _log_format(self, instant: str, schema: pa.Schema) -> tuple[dict[int, str], tuple]:
        """The header of this instant's log blocks (the writer's Avro schema with the meta
        fields, as Hudi writes it) and the ordering value of its delete records."""
        meta = [pa.field(f.name, f.type) for f in META_FIELDS[:-1]]
        avro = avro_schema_json(pa.schema([*meta, *schema]), table_name(self.storage))
        return log_header(instant, avro), delete_ordering(schema, self.config.ordering_field)

    def _append(self, instant: str, records: pa.Table, token: str) -> WriteStat:
        fid = f"ap-{uuid.uuid4().hex[:12]}"
        name = base_file_name(fid, token, instant)
        table = add_meta(records, self.config.key_field, instant, 0, name)
        self.markers.create(instant, name, CREATE)
        size = self.storage.write_verified(name, parquet_encoder(table))
        self.catalog.cache.put(name, table)
        new_keys = records.column(self.config.key_field).to_pylist() if self._tracks_new() else None
        return WriteStat.appended(fid, name, instant, token, records.num_rows, size, new_keys)

    def _tracks_new(self) -> bool:
        return self.config.index == "dynamic"

    def _merge_base(
        self,
        instant: str,
        fid: str,
        rows: pa.Table,
        op: str,
        token: str,
        before: list[WriteStat],
        view: FileSystemView,
        new_keys: list | None,
    ) -> WriteStat | None:
        key = self.config.key_field
        if before:
            prev: str | None = before[-1].file_name
        else:
            base, _ = view.latest(fid)
            prev = base.name if base is not None else None
        base_rows = self.catalog.read(prev) if prev is not None else None
        n = rows.num_rows
        name = base_file_name(fid, token, instant)
        if base_rows is None:
            if op == "delete":
                return None
            merged, inserts, deletes = add_meta(rows, key, instant, len(before), name), n, 0
        else:
            # Keys are unique in the base and in the batch: the hits are the base's
            # versions the batch replaces or deletes.
            replaced = pc.is_in(base_rows.column(key), value_set=rows.column(key))
            hits = pc.sum(replaced).as_py() or 0
            if op == "delete" and hits == 0:
                return None
            # The versions kept, then the batch's (the order last_per_key would give;
            # concatenating copies nothing).
            kept = base_rows.filter(pc.invert(replaced)) if hits else base_rows
            if op != "delete":
                kept = concat([kept, add_meta(rows, key, instant, len(before), name)])
            if kept.column(0).num_chunks > 16:  # cached merges would fragment over writes
                kept = kept.combine_chunks()
            merged = with_file_name(kept, name)
            inserts = 0 if op == "delete" else n - hits
            deletes = hits if op == "delete" else 0
        self._check_new_name(name, before)
        self.markers.create(instant, name, MERGE if prev is not None else CREATE)
        size = self.storage.write_verified(name, parquet_encoder(merged))
        self.catalog.cache.put(name, merged)
        return WriteStat(
            fid,
            name,
            BASE,
            instant,
            token,
            op,
            merged.num_rows,
            n,
            deletes,
            inserts,
            size,
            prev,
            new_keys,
        )

    def _append_log(
        self,
        instant: str,
        fid: str,
        rows: pa.Table,
        op: str,
        token: str,
        before: list[WriteStat],
        new_keys: list | None,
        log: tuple[dict[int, str], tuple],
    ) -> WriteStat:
        version = 1 + sum(s.kind == LOG for s in before)
        name = log_file_name(fid, instant, version, token)
        self._check_new_name(name, before)
        self.markers.create(instant, name, APPEND)
        header, ordering = log
        key = self.config.key_field
        if op == "delete":
            table = delete_markers(rows.column(key).combine_chunks(), key, instant, name)
            data = delete_log_bytes(table.column(key), header, ordering)
        else:
            table = add_meta(rows, key, instant, version - 1, name)
            data = data_log_bytes(table, header)
        size = self.storage.write_verified(name, data)
        self.catalog.cache.put(name, table)
        n = rows.num_rows
        deletes = n if op == "delete" else 0
        inserts = len(new_keys) if new_keys is not None else None
        return WriteStat(
            fid, name, LOG, instant, token, op, n, n, deletes, inserts, size, None, new_keys
        )

    @staticmethod
    def _check_new_name(name: str, before: list[WriteStat]) -> None:
        if any(s.file_name == name for s in before):
            raise ValueError(f"write token reused: {name} was already written in this instant")


def dynamic_index(catalog: Catalog, view: FileSystemView, config: TableConfig) -> DynamicIndex:
    """The dynamic index of `view`: the keys of each group's latest slice."""
    keys_by_group = {}
    for fid in view.file_ids():
        base, logs = view.latest(fid)
        files = ([base] if base else []) + logs
        parts = [chunk for f in files for chunk in catalog.read_keys(f, config.key_field).chunks]
        if parts:
            keys_by_group[fid] = pa.chunked_array(parts).combine_chunks()
    return DynamicIndex(keys_by_group, [bucket_file_id(b) for b in range(config.file_groups)])


def _partition(
    records: pa.Table, route: Route
) -> Iterable[tuple[int, pa.Table, np.ndarray | None]]:
    """(group code, rows, new-key mask) per group; rows with code -1 are dropped."""
    codes, new = route.codes, route.new
    # As int16 (a group code is below len(file_ids)) numpy sorts stably by radix: 0.17 ms
    # per 50,000 rows instead of 1.2 for int64's merge sort.
    small = codes.astype(np.int16) if len(route.file_ids) < 2**15 else codes
    order = np.argsort(small, kind="stable")
    sorted_codes = codes[order]
    uniq, starts = np.unique(sorted_codes, return_index=True)
    ends = [*starts[1:], len(codes)]
    if len(uniq) == 1 and uniq[0] >= 0:
        yield int(uniq[0]), records, new
        return
    taken = records.take(pa.array(order))
    new_sorted = new[order] if new is not None else None
    for code, start, end in zip(uniq, starts, ends, strict=True):
        if code < 0:
            continue
        mask = new_sorted[start:end] if new_sorted is not None else None
        yield int(code), taken.slice(start, end - start), mask
