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
from harness.checks.hudi_read_plan import Completed
from harness.checks.result import MAX_LISTED


def sorted_keys(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    return pc.take(values, pc.sort_indices(values)).slice(0, MAX_LISTED)


@dataclass(frozen=True)
class Misfiled:
    """Keys an archived log write (`instant`) wrote into `file_group` while compactions of
    that group were requested (`straddled`, their requested times): hudi-rs files the log
    before them and reads their slices without it. `absorbed_by`: the group's compactions
    requested after the log completed, whose base files hold its rows again."""

    file_group: str
    instant: Completed
    straddled: tuple[str, ...]
    absorbed_by: tuple[Completed, ...]
    keys: pa.Array

    def in_view(self, c: str | None, t: str | None) -> bool:
        """Does the engine's read as of c (None: the snapshot) hold the log, while hudi-rs's
        as of t (None: the latest) reads a slice without it?"""

        def reached(time: str, bound: str | None) -> bool:
            return bound is None or time <= bound

        if not reached(self.instant.completed, c) or not reached(self.straddled[0], t):
            return False
        absorbed = (k for k in self.absorbed_by if reached(k.requested, t))
        return not any(reached(k.completed, c) for k in absorbed)

    def confirmed(self, engine: pa.Table, other: pa.Table, key: str) -> pa.Array:
        """The keys of this write that one read may leave out: those whose difference is
        the one the rule predicts, the engine's row this write's and the other reader's
        absent or an older instant's (its predecessor). Any other difference on them is
        compared. Both tables carry the key and COMMIT_TIME."""
        written, key_type = self.instant.requested, engine.schema.field(key).type
        this_write = pc.and_(
            pc.is_in(engine.column(key), value_set=self.keys.cast(key_type)),
            pc.equal(engine.column(COMMIT_TIME), written),
        )
        mine = engine.filter(this_write).column(key)
        theirs = other.select([key, COMMIT_TIME])
        try:
            theirs = theirs.cast(pa.schema([engine.schema.field(key), theirs.schema.field(1)]))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return pa.array([], key_type)  # nothing to confirm against
        seen = theirs.filter(pc.greater_equal(theirs.column(COMMIT_TIME), written)).column(key)
        return pc.filter(mine, pc.invert(pc.is_in(mine, value_set=seen))).combine_chunks()

    def evidence(self) -> dict[str, Any]:
        return {
            "file_group": self.file_group,
            "instant": self.instant.requested,
            "completed": self.instant.completed,
            "compactions_requested_while_inflight": list(self.straddled),
            "keys": {"count": len(self.keys), "keys": sorted_keys(self.keys).to_pylist()},
        }


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
