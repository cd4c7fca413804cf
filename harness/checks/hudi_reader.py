"""hudi_reader: Apache Hudi's own reader (hudi-rs) as a second judge of the final table.

The same table is read by the engine and by hudi-rs: the snapshot, time travel at
completion times, and one incremental pull per completed data instant. Any difference
in the rows (by record key, and each compared value column) is `invalid`, naming rows.

Where the two readers' semantics differ, only what is comparable is compared (hudi-rs
0.5.0, from its source and measured: tests/unit/harness/test_hudi_reader_tables.py):

- Time travel. The engine's `as_of(c)` reads the instants that COMPLETED at or before c.
  hudi-rs's time travel to T reads the instants REQUESTED at or before T that are
  completed now: file slices are keyed by requested time (a log-only slice by the
  requested time of the log that opened it), log blocks are filtered by their requested
  time, files of instants not completed now are dropped. So the engine's as-of c is
  compared with hudi-rs's time travel to T = the latest requested time among the
  instants completed by c, when (a) every instant not completed by c was requested after
  T (the completed ones are a prefix in requested order), and (b) no compaction pending
  at c has a log completed by c in one of its groups after its request (hudi-rs files
  that log under the compaction's slice, which T does not reach). Under (a) and
  (b) both select the same instants and the same slices (`time_travel_points`). In async
  mode the next instant is requested before the previous one completes, so c itself is
  rarely a T: hence T, not c.
- Incremental. Both select by COMPLETION time: hudi-rs admits the commits completed in
  (b, e], reads the file slices of the groups they touched as of the latest admitted
  REQUESTED time, and masks the rows to the admitted commit times. Between consecutive
  completion times one instant i completes; its pull is compared unless another instant j
  in one of its file groups was requested after it and either is a compaction requested
  before i completed (i's log joins j's new slice) or is a log write that completed before
  i into a group without a base file (j opened the log-only slice i's log joins): then
  hudi-rs files i's rows under a slice its
  read as of i's requested time does not reach, misses them, and no later pull returns
  them, where the engine returns them in the pull i's completion falls in (its contract:
  a pull never skips an instant that completes late). A pull of an archived instant is
  not compared either: hudi-rs pulls read the active timeline only. `incremental_pulls`.
- Archived log writes. hudi-rs reads the active timeline only, so it knows no completion
  time for an archived instant and files its log by its requested time, under the slice
  keyed at or before it. Where a compaction of the group was requested while that log
  write was inflight, the engine (and Java Hudi, which reads the archived timeline too)
  files the log under the compaction's slice, which hudi-rs then reads without it, until a
  compaction requested after the log completed holds its rows in a base file. Such keys
  (`Misfiled`) are left out of the snapshot and the time-travel points that read that
  slice, and counted under `archived_logs`, naming the group, the instant and the
  compactions, but only where the difference is the one predicted: the engine's row is
  that write's (its commit time) and hudi-rs's is the key's version before it, the row
  the engine's own reader returns from the same view of the group without the misfiled
  logs (same commit time, same values), or absent where that read has none
  (`Misfiled.confirmed`). Every other key of those reads, and every other difference on
  those keys (an older version but not that one, say), is still compared.
- Both readers read only inside the cleaner's retention window (engine/table/cleaning.py):
  before it files are gone by design, so earlier points and pulls are not compared.
- Merge order. When two instants wrote the same key into one file slice (MOR log writes of
  two writers do not conflict, and the pk check only refuses a key in ANOTHER group), every
  reader keeps the row of the one REQUESTED last: Java Hudi and hudi-rs merge a slice's
  logs in the order of the instant times in their names (`HoodieLogFile.
  getLogFileComparator()`), and the engine does the same (engine/layout/file_slices.py
  `log_order`), also where the other one completed later (measured with Java Hudi 1.2.0:
  tests/systems/test_hudi_java_reader_check.py). Such keys are compared like any other.
- Bounded. Rows compared and left out are counted; a read that leaves more than
  MAX_EXCLUDED_SHARE of its rows out judges too little: the check is then `unknown`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.compute as pc

from harness.checks.arrays import OTHER, differences
from harness.checks.hudi_exclusions import Misfiled, sorted_keys
from harness.checks.hudi_read_plan import (
    MAX_PULLS,
    MAX_TIME_TRAVEL,
    Completed,
    plan_reads,
)
from harness.checks.result import MAX_LISTED, CheckResult, capped, fail_closed

NAME = "hudi_reader"
# A read may leave at most this share of its rows out of the comparison (archived_logs);
# past it, the run is `unknown`: agreement on the rest proves too little.
MAX_EXCLUDED_SHARE = 0.10


class Reads(Protocol):
    """A reader of the final table, projected to the compared columns."""

    def snapshot(self) -> pa.Table: ...
    def as_of(self, time: str) -> pa.Table: ...
    def incremental(self, begin: str | None, end: str) -> pa.Table: ...


class OwnReads(Reads, Protocol):
    """The engine's reads, and what it reads of one file group without some of its logs."""

    def without(self, as_of: str | None, file_id: str, logs: frozenset[str]) -> pa.Table:
        """File group `file_id` as of `as_of` (None: the snapshot) with the log files
        `logs` left out of its slices: each key's version before those logs."""
        ...


def diff_rows(engine: pa.Table, hudi: pa.Table, key: str) -> dict[str, Any] | None:
    """None if both hold the same rows (keyed by `key`, every other column compared);
    otherwise what differs, naming a few keys of each kind."""
    if hudi.num_rows == engine.num_rows == 0:
        return None
    hudi = _like(hudi, engine.schema)
    if _same(engine, hudi, key):
        return None
    out: dict[str, Any] = {"engine_rows": engine.num_rows, "hudi_rows": hudi.num_rows}
    for side, rows in (("engine", engine), ("hudi", hudi)):
        dups = _duplicated(rows.column(key))
        if dups:
            out[f"duplicated_in_{side}"] = dups
    e_keys, h_keys = engine.column(key), hudi.column(key)
    for side, mine, theirs in (("engine", e_keys, h_keys), ("hudi", h_keys, e_keys)):
        only = pc.filter(mine, pc.invert(pc.is_in(mine, value_set=theirs)))
        if len(only):
            out[f"only_{side}"] = {"count": len(only), "keys": sorted_keys(only).to_pylist()}
    different = _different_values(engine, hudi, key)
    if different["count"]:
        out["different"] = different
    return None if out.keys() == {"engine_rows", "hudi_rows"} else out


def _same(engine: pa.Table, hudi: pa.Table, key: str) -> bool:
    """Do both hold the very same rows, no key twice? The common case, answered by one sort
    of each side instead of the joins and counts that say what differs."""
    if engine.num_rows != hudi.num_rows:
        return False
    by_key = [(key, "ascending")]
    engine, hudi = engine.sort_by(by_key), hudi.sort_by(by_key)
    keys = engine.column(key)
    if len(keys) > 1 and pc.any(pc.equal(keys.slice(1), keys.slice(0, len(keys) - 1))).as_py():
        return False  # a key twice: diff_rows names it
    return engine.equals(hudi)


def _without(rows: pa.Table, key: str, excluded: list[pa.Array]) -> pa.Table:
    """`rows` but those whose key is in one of `excluded`."""
    if not excluded or not rows.num_rows:
        return rows
    keys = rows.column(key)
    drop = pa.concat_arrays([k.cast(keys.type) for k in excluded])
    return rows.filter(pc.invert(pc.is_in(keys, value_set=drop)))


def _like(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """hudi-rs's rows in the engine's column order and types (a type it cannot take is a
    difference: raises ValueError)."""
    missing = [n for n in schema.names if n not in table.column_names]
    if missing:
        raise ValueError(f"hudi-rs returned no column(s) {missing} (got {table.column_names})")
    table = table.select(schema.names)
    try:
        return table.cast(schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise ValueError(f"hudi-rs's column types {table.schema} do not cast: {e}") from e


def _duplicated(keys: pa.ChunkedArray) -> dict[str, Any] | None:
    counts = pc.value_counts(keys)
    dup = pc.filter(counts.field("values"), pc.greater(counts.field("counts"), 1))
    return {"count": len(dup), "keys": sorted_keys(dup).to_pylist()} if len(dup) else None


def _different_values(engine: pa.Table, hudi: pa.Table, key: str) -> dict[str, Any]:
    """Keys in both whose other columns differ (nulls compare equal to nulls)."""
    values = [n for n in engine.column_names if n != key]
    joined, differs, per_column = differences(engine, hudi, key)
    bad = joined.filter(differs)
    bad = bad.take(pc.sort_indices(bad.column(key)))
    items = [
        {
            "key": row[key],
            "engine": {n: row[n] for n in values},
            "hudi": {n: row[n + OTHER] for n in values},
        }
        for row in bad.slice(0, MAX_LISTED).to_pylist()
    ]
    return {"count": bad.num_rows, "columns": per_column, "items": items}


@dataclass
class Comparison:
    """The reads compared so far: what differs, and what the exclusions left out. A read
    that leaves more than MAX_EXCLUDED_SHARE of its rows out (all of them, say) judges too
    little to count as agreeing: it is listed under `over_bound`."""

    key: str
    misfiled: list[Misfiled]
    without: Callable[[str | None, str, frozenset[str]], pa.Table]  # OwnReads.without
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    over_bound: list[dict[str, Any]] = field(default_factory=list)
    reads_excluding_archived: int = 0
    compared_rows: int = 0
    excluded_rows: int = 0

    def compare(
        self,
        where: dict[str, Any],
        ours: Callable[[], pa.Table],
        theirs: Callable[[], pa.Table],
        view: tuple[str | None, str | None] | None = None,
    ) -> int:
        """Compare one read; `view`: (engine as of, hudi-rs as of) of a snapshot or
        time-travel read (None: a pull). The engine's row count."""
        mine = ours()
        applies = [m for m in self.misfiled if view is not None and m.in_view(*view)]
        before = self._before(applies, None if view is None else view[0])
        try:
            other = theirs()
            excluded = [m.confirmed(mine, other, before[m.file_group], self.key) for m in applies]
            excluded = [k for k in excluded if len(k)]
            kept = _without(mine, self.key, excluded)
            diff = diff_rows(kept, _without(other, self.key, excluded), self.key)
        except Exception as e:  # the Hudi reader failed the read, or returned what cannot compare
            excluded, kept = [], mine
            diff = {"error": f"{type(e).__name__}: {e}"}
        self.reads_excluding_archived += bool(excluded)
        left_out = mine.num_rows - kept.num_rows
        self.compared_rows += kept.num_rows
        self.excluded_rows += left_out
        if left_out > MAX_EXCLUDED_SHARE * mine.num_rows:
            self.over_bound.append({**where, "rows": mine.num_rows, "left_out": left_out})
        if diff:
            self.disagreements.append({**where, **diff})
        return mine.num_rows

    def _before(self, applies: list[Misfiled], as_of: str | None) -> dict[str, pa.Table]:
        """Per file group of `applies`, the engine's read of it as of `as_of` without all
        their logs in it: hudi-rs files each of them under another slice, so a key two of
        them wrote is, for hudi-rs, the version before both. Read before the other reader's
        rows, so that an engine error propagates."""
        logs: dict[str, frozenset[str]] = {}
        for m in applies:
            logs[m.file_group] = logs.get(m.file_group, frozenset()) | m.logs
        return {g: self.without(as_of, g, names) for g, names in sorted(logs.items())}

    def evidence(self) -> dict[str, Any]:
        misfiled = self.misfiled
        return {
            "archived_logs": {
                "reads_excluding_keys": self.reads_excluding_archived,
                "skipped": {
                    "count": len(misfiled),
                    "items": capped(m.evidence() for m in misfiled),
                },
            },
            "rows": {
                "compared": self.compared_rows,
                "left_out": self.excluded_rows,
                "max_left_out_share": MAX_EXCLUDED_SHARE,
                "reads_over_bound": {
                    "count": len(self.over_bound),
                    "items": capped(self.over_bound),
                },
            },
            "disagreements": {
                "count": len(self.disagreements),
                "items": capped(self.disagreements),
            },
        }


def hudi_reader(
    instants: list[Completed],
    engine: OwnReads,
    hudi: Reads,
    key: str,
    reader: str = "hudi-rs",
    limits: tuple[int, int] = (MAX_TIME_TRAVEL, MAX_PULLS),
    window_from: str | None = None,
    misfiled: list[Misfiled] | None = None,
    refused: Callable[[str], str | None] = lambda _: None,
    name: str = NAME,
) -> CheckResult:
    """Compare the two readers on the snapshot, the comparable time-travel points and
    incremental pulls (at most `limits`, `plan_reads`). An error of the Hudi reader on a
    read is a disagreement (the engine's table must be readable by Hudi); an error of the
    engine's own read propagates. `window_from`: the cleaner's retention boundary (None:
    nothing cleaned); points and pulls before it are not compared. `misfiled`: keys of
    archived log writes, left out of the snapshot and the points whose slices hudi-rs reads
    without them. `refused`: why the Hudi reader refuses time travel to T by design, or
    None. `name`: the check's (one comparison serves every Hudi reader)."""
    plan = plan_reads(instants, limits, window_from, refused)
    reads = Comparison(key, misfiled or [], engine.without)
    snapshot_rows = reads.compare(
        {"read": "snapshot"}, engine.snapshot, hudi.snapshot, (None, None)
    )
    for c, upto in plan.points:
        reads.compare(
            {"read": "time_travel", "as_of": c, "hudi_as_of": upto},
            functools.partial(engine.as_of, c),
            functools.partial(hudi.as_of, upto),
            (c, upto),
        )
    for p in plan.pulls:
        reads.compare(
            {"read": "incremental", "instant": p.instant, "begin": p.begin, "end": p.end},
            functools.partial(engine.incremental, p.begin, p.end),
            functools.partial(hudi.incremental, p.begin, p.end),
        )
    evidence = {
        "reader": reader,
        "instants": len(instants),
        "snapshot_rows": snapshot_rows,
        **plan.evidence(),
        **reads.evidence(),
    }
    if reads.disagreements:
        return CheckResult(name, "invalid", evidence)
    reasons = [
        (not instants, "no completed instant: nothing was compared"),
        (snapshot_rows == 0, "the snapshot is empty: the readers agreed on nothing"),
        (
            bool(reads.over_bound),
            f"{len(reads.over_bound)} read(s) left more than {MAX_EXCLUDED_SHARE:.0%} of their "
            "rows out of the comparison (rows.reads_over_bound)",
        ),
    ]
    return fail_closed(name, evidence, reasons)
