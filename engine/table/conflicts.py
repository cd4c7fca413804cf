"""Commit-time checks: optimistic concurrency control and primary-key uniqueness.

Candidates are data instants that completed after the committing instant started, i.e.
with a completion time above its OCC baseline (the largest completion time on the
timeline when it started). Compactions never conflict: completion-time slicing puts
logs written after a compaction was scheduled into the new slice. Two writes that only
append log files to a file group do not conflict either: readers merge logs in
completion-time order, so neither append is lost (Hudi's non-blocking concurrency control
for MOR). A conflict needs a rewritten base file: a copy-on-write merge that read a slice
someone else changed meanwhile.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from engine.errors import DuplicateKeyError, WriteConflictError
from engine.table.catalog import Catalog
from engine.table.stats import WriteStat
from engine.timeline.instant import DATA_ACTIONS, Instant


def candidates(catalog: Catalog, instant: str, baseline: str | None) -> list[Instant]:
    return [
        i
        for i in catalog.timeline.completed()
        if i.action in DATA_ACTIONS
        and i.requested_time != instant
        and (baseline is None or i.completed_at > baseline)
    ]


def check_occ(catalog: Catalog, instant: str, baseline: str | None, stats: list[WriteStat]) -> None:
    mine = {s.file_id for s in stats}
    my_bases = {s.file_id for s in stats if s.kind == "base"}
    for other in candidates(catalog, instant, baseline):
        files = catalog.files_of(other)
        their_bases = {f.file_id for f in files if f.kind == "base"}
        overlap = (mine & their_bases) | (my_bases & {f.file_id for f in files})
        if overlap:
            raise WriteConflictError(instant, other.requested_time, overlap)


def check_unique_keys(
    catalog: Catalog, key: str, instant: str, baseline: str | None, stats: list[WriteStat]
) -> None:
    """A key this instant inserts as new must not live in another file group written by an
    instant that completed after this one started (nor in two groups of this instant)."""
    with_keys = [(s, s.new_keys) for s in stats if s.new_keys]
    if not with_keys:
        return
    keys = pa.array([k for _, new in with_keys for k in new])
    groups = np.array([s.file_id for s, new in with_keys for _ in new])
    dup_keys: list[object] = []
    dup_groups: set[str] = set()
    # Within this instant: one key inserted into two groups.
    for s, new in with_keys:
        clash = pc.is_in(keys, value_set=pa.array(new)).to_numpy(zero_copy_only=False)
        clash &= groups != s.file_id
        if clash.any():
            dup_keys += keys.filter(pa.array(clash)).to_pylist()
            dup_groups |= {s.file_id, *groups[clash]}
    for other in candidates(catalog, instant, baseline):
        for f in catalog.files_of(other):
            theirs = catalog.read_keys(f, key)
            clash = pc.is_in(keys, value_set=theirs).to_numpy(zero_copy_only=False)
            clash &= groups != f.file_id
            if clash.any():
                dup_keys += keys.filter(pa.array(clash)).to_pylist()
                dup_groups |= {f.file_id, *groups[clash]}
    if dup_keys:
        raise DuplicateKeyError(instant, sorted(set(dup_keys), key=str), dup_groups)
