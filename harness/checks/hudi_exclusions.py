"""The keys hudi_reader leaves out of a comparison, and why: where hudi-rs, reading the active
timeline only, files an archived log write under another slice than the engine and Java
Hudi (harness/checks/hudi_reader.py, "Archived log writes"). Each names its file group and
instants; a key is left out of a read only where its difference is the one predicted
(`Misfiled.confirmed`), and a read may leave out at most MAX_EXCLUDED_SHARE of its rows
(hudi_reader.Comparison)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from engine.table.merge import COMMIT_TIME
from harness.checks.arrays import differences
from harness.checks.hudi_read_plan import Completed
from harness.checks.result import MAX_LISTED


def sorted_keys(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    return pc.take(values, pc.sort_indices(values)).slice(0, MAX_LISTED)


@dataclass(frozen=True)
class Misfiled:
    """Keys an archived log write (`instant`) wrote into `file_group`, in its log files
    `logs`, while compactions of that group were requested (`straddled`, their requested
    times): hudi-rs files the log before them and reads their slices without it.
    `absorbed_by`: the group's compactions requested after the log completed, whose base
    files hold its rows again."""

    file_group: str
    instant: Completed
    straddled: tuple[str, ...]
    absorbed_by: tuple[Completed, ...]
    keys: pa.Array
    logs: frozenset[str]

    def in_view(self, c: str | None, t: str | None) -> bool:
        """Does the engine's read as of c (None: the snapshot) hold the log, while hudi-rs's
        as of t (None: the latest) reads a slice without it?"""

        def reached(time: str, bound: str | None) -> bool:
            return bound is None or time <= bound

        if not reached(self.instant.completed, c) or not reached(self.straddled[0], t):
            return False
        absorbed = (k for k in self.absorbed_by if reached(k.requested, t))
        return not any(reached(k.completed, c) for k in absorbed)

    def confirmed(self, engine: pa.Table, other: pa.Table, before: pa.Table, key: str) -> pa.Array:
        """The keys of this write that one read may leave out: those whose difference is
        the one the rule predicts, the engine's row this write's and the other reader's
        the key's version before it, `before`'s row (the engine's read of the group in
        the same view without the misfiled logs) in every column, or absent where
        `before` has none. Any other row of theirs (an older version but not that one,
        other values) is compared, and so is a key the engine returns twice. The tables
        carry the engine's columns, COMMIT_TIME among them."""
        written, key_type = self.instant.requested, engine.schema.field(key).type
        rows = _once(engine, key)
        this_write = pc.and_(
            pc.is_in(rows.column(key), value_set=self.keys.cast(key_type)),
            pc.equal(rows.column(COMMIT_TIME), written),
        )
        mine = rows.filter(this_write).column(key).combine_chunks()
        try:
            theirs = other.select(engine.schema.names).cast(engine.schema)
        except (KeyError, pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return pa.array([], key_type)  # nothing to confirm against
        return _alike(before.select(engine.schema.names), theirs, key, mine)

    def evidence(self) -> dict[str, Any]:
        return {
            "file_group": self.file_group,
            "instant": self.instant.requested,
            "completed": self.instant.completed,
            "compactions_requested_while_inflight": list(self.straddled),
            "keys": {"count": len(self.keys), "keys": sorted_keys(self.keys).to_pylist()},
        }


def _alike(was: pa.Table, now: pa.Table, key: str, keys: pa.Array) -> pa.Array:
    """Those of `keys` (distinct) that both `was` and `now` lack, or hold once each with
    the same values in every column (a key twice on either side is compared)."""
    was, now = (t.filter(pc.is_in(t.column(key), value_set=keys)) for t in (was, now))
    held = pa.chunked_array([*was.column(key).chunks, *now.column(key).chunks], keys.type)
    absent = pc.filter(keys, pc.invert(pc.is_in(keys, value_set=held)))
    joined, differs, _ = differences(_once(was, key), _once(now, key), key)
    same = joined.filter(pc.invert(differs)).column(key)
    return pa.concat_arrays([absent, *same.chunks])


def _once(rows: pa.Table, key: str) -> pa.Table:
    """`rows` but those whose key they hold more than once."""
    counts = pc.value_counts(rows.column(key))
    single = pc.filter(counts.field("values"), pc.equal(counts.field("counts"), 1))
    return rows.filter(pc.is_in(rows.column(key), value_set=single))


def misfiled_logs(
    instants: list[Completed],
) -> list[tuple[Completed, str, tuple[str, ...], tuple[Completed, ...]]]:
    """(log write, file group, `straddled`, `absorbed_by`) for every archived log write
    (`Misfiled`) into a group a compaction was requested for while it was inflight."""
    compactions = [i for i in instants if not i.data]
    out = []
    for j in instants:
        if not (j.archived and j.action == "deltacommit"):
            continue
        for g in sorted(j.groups):
            mine = [k for k in compactions if g in k.groups]
            straddled = tuple(
                sorted(k.requested for k in mine if j.requested < k.requested <= j.completed)
            )
            if straddled:
                absorbed = tuple(k for k in mine if k.requested > j.completed)
                out.append((j, g, straddled, absorbed))
    return out
