"""Snapshot, as-of and incremental reads (merge-on-read done vectorised)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.layout.file_slices import FileSystemView
from engine.table.catalog import Catalog
from engine.table.merge import (
    COMMIT_TIME,
    IS_DELETED,
    META_COLUMNS,
    META_FIELDS,
    concat,
    drop_deleted,
    latest_per_key,
)
from engine.timeline.instant import Instant

_GROUP = "__group"


def read_view(
    catalog: Catalog,
    view: FileSystemView,
    key: str,
    schema: pa.Schema | None,
    columns: list[str] | None,
    with_meta: bool,
    file_ids: Iterable[str] | None = None,
    ordering_field: str | None = None,
) -> pa.Table:
    """The view's rows, of every file group or only of `file_ids` (a distributed reader
    reads the groups in parallel, each worker a few of them); `ordering_field` merges by
    event time (merge.latest_per_key)."""
    bases: list[pa.Table] = []
    merged_groups: list[pa.Table] = []
    # A group without logs needs no merge: read only the wanted columns of its base.
    meta = META_COLUMNS if with_meta else ()
    wanted = None if columns is None else list(dict.fromkeys([*columns, *meta]))
    for code, fid in enumerate(view.file_ids() if file_ids is None else file_ids):
        base, logs = view.latest(fid)
        if not logs:
            if base is not None:
                bases.append(catalog.read(base, wanted))
            continue
        base_rows = catalog.read(base) if base is not None else None
        parts = ([base_rows] if base_rows is not None else []) + [catalog.read(f) for f in logs]
        merged_groups.append(_tag(concat(parts), code))
    if merged_groups:
        # One vectorised merge for all groups: the last version per (group, key) wins.
        merged = latest_per_key(concat(merged_groups), [_GROUP, key], ordering_field)
        merged = merged.drop_columns([_GROUP])
        bases.append(drop_deleted(merged))
    return _project(bases, schema, columns, with_meta)


def read_incremental(
    catalog: Catalog,
    instants: list[Instant],
    key: str,
    schema: pa.Schema | None,
    columns: list[str] | None,
    with_meta: bool,
    include_deletes: bool,
    ordering_field: str | None = None,
) -> pa.Table:
    """Latest version per key among rows written by `instants`, merged as a slice's logs
    are: in requested-time order (engine/layout/file_slices.py `log_order`)."""
    parts = []
    codes: dict[str, int] = {}
    for instant in sorted(instants, key=lambda i: i.requested_time):
        for f in catalog.files_of(instant):
            rows = catalog.read(f)
            own = pc.equal(rows.column(COMMIT_TIME), instant.requested_time)
            parts.append(_tag(rows.filter(own), codes.setdefault(f.file_id, len(codes))))
    if not parts:
        return _project([], schema, columns, with_meta)
    latest = latest_per_key(concat(parts), [_GROUP, key], ordering_field).drop_columns([_GROUP])
    kept = latest if include_deletes else drop_deleted(latest)
    return _project([kept], schema, columns, with_meta)


def _tag(table: pa.Table, code: int) -> pa.Table:
    return table.append_column(_GROUP, pa.array(np.full(table.num_rows, code, dtype=np.int32)))


def _project(
    parts: list[pa.Table], schema: pa.Schema | None, columns: list[str] | None, with_meta: bool
) -> pa.Table:
    parts = [p for p in parts if p.num_rows] or parts[:1]
    # Delete markers carry just the key: the schema fills in the other columns, and
    # `_hoodie_is_deleted`, stored in no file, is false on every other row.
    head = pa.schema([*(schema or []), *META_FIELDS]).empty_table()
    table = concat([head, *parts])
    wanted = (
        list(columns)
        if columns is not None
        else [c for c in table.column_names if c not in META_COLUMNS]
    )
    missing = [c for c in wanted if c not in table.column_names]
    if missing:
        raise KeyError(f"unknown column(s) {missing}; table columns: {table.column_names}")
    if with_meta:
        wanted += [c for c in META_COLUMNS if c not in wanted]
    out = table.select(wanted)
    if IS_DELETED in wanted:
        i = wanted.index(IS_DELETED)
        out = out.set_column(i, IS_DELETED, pc.fill_null(out.column(i), False))
    return out
