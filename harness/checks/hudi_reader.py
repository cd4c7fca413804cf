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
  compactions. Every other key of those reads is still compared.
- Both readers read only inside the cleaner's retention window (engine/table/cleaning.py):
  before it files are gone by design, so earlier points and pulls are not compared.
- Merge order. When two instants wrote the same key into one file group (MOR log writes of
  two writers do not conflict, and the pk check only refuses a key in ANOTHER group), the
  engine's merge keeps the version of the instant that COMPLETED last (engine/layout/
  file_slices.py `log_order`, completion-time semantics), hudi-rs the version of the one
  REQUESTED last: its `InputSplit::new` (crates/core/src/file_group/reader_v2/
  input_split.rs) re-sorts a slice's log files by the instant time in their names (as Java's
  `HoodieLogFile.getLogFileComparator()`), and without an ordering field the merge mode is
  COMMIT_TIME_ORDERING, where the record read last wins (reader_v2/record_merger.rs
  `CommitTimeRecordMerger`). So where one instant was requested before the other and
  completed after it, the key's row differs legitimately: such keys (`Contested`) are left
  out of every read holding both instants (the snapshot; as-of points both completed by;
  pulls holding both completions) and counted as skipped under `merge_order`, naming the
  group and both instants. Every other key of those reads is still compared.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import pyarrow as pa
import pyarrow.compute as pc

from harness.checks.result import MAX_LISTED, CheckResult, capped, fail_closed

NAME = "hudi_reader"
# Reads compared at most, spread evenly (each read runs on both readers); the counts
# compared, comparable and skipped are in the evidence.
MAX_TIME_TRAVEL = 24
MAX_PULLS = 48
# Rows a reader reads at most for time travel and pulls together (a pull reads whole file
# slices): a large table gets fewer reads, never fewer than the snapshot and one of each.
ROW_BUDGET = 40_000_000


@dataclass(frozen=True)
class Completed:
    """A completed instant whose files either reader reads (data commits, compactions)."""

    requested: str
    completed: str
    action: str
    data: bool = True  # an incremental pull reads it (not a compaction)
    groups: frozenset[str] = frozenset()  # the file groups it wrote files in
    archived: bool = False  # moved to the archived timeline (hudi-rs pulls cannot see it)


@dataclass(frozen=True)
class Pull:
    """One incremental pull (begin, end] by completion time: one instant completed in it."""

    instant: str  # requested time of that instant
    begin: str | None
    end: str


@dataclass(frozen=True)
class Contested:
    """Keys two data instants both wrote into one file group in crossed order: `early` was
    requested before `late` and completed after it. The engine keeps early's rows (completed
    last), hudi-rs late's (requested last)."""

    file_group: str
    early: Completed
    late: Completed
    keys: pa.Array

    def in_read(self, begin: str | None, end: str | None) -> bool:
        """Both instants are in a read of the instants completed in (begin, end]."""
        return (begin is None or self.late.completed > begin) and (
            end is None or self.early.completed <= end
        )

    def evidence(self) -> dict[str, Any]:
        return {
            "file_group": self.file_group,
            "requested_earlier_completed_later": self.early.requested,
            "requested_later_completed_earlier": self.late.requested,
            "keys": {"count": len(self.keys), "keys": _sorted(self.keys).to_pylist()},
        }


def crossed_pairs(instants: list[Completed]) -> list[tuple[Completed, Completed, list[str]]]:
    """(early, late, their common file groups) for every two data instants where early was
    requested before late and completed after it, and both wrote files into a group."""
    data = sorted((i for i in instants if i.data), key=lambda i: i.requested)
    pairs = []
    for n, early in enumerate(data):
        for late in data[n + 1 :]:
            if late.requested >= early.completed:
                break  # requested after early completed: neither it nor later ones cross
            common = early.groups & late.groups
            if late.completed < early.completed and common:
                pairs.append((early, late, sorted(common)))
    return pairs


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

    def evidence(self) -> dict[str, Any]:
        return {
            "file_group": self.file_group,
            "instant": self.instant.requested,
            "completed": self.instant.completed,
            "compactions_requested_while_inflight": list(self.straddled),
            "keys": {"count": len(self.keys), "keys": _sorted(self.keys).to_pylist()},
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


class Reads(Protocol):
    """A reader of the final table, projected to the compared columns."""

    def snapshot(self) -> pa.Table: ...
    def as_of(self, time: str) -> pa.Table: ...
    def incremental(self, begin: str | None, end: str) -> pa.Table: ...


def time_travel_points(
    instants: list[Completed],
) -> tuple[list[tuple[str, str]], list[dict[str, Any]]]:
    """([(c, T)]: the engine's as-of c and hudi-rs's time travel to T select the same
    instants; the completion times skipped, with the instants that break the rule), in
    completion order."""
    by_completion = sorted(instants, key=lambda i: i.completed)
    points, skipped = [], []
    for n, inst in enumerate(by_completion):
        c = inst.completed
        upto = max(i.requested for i in by_completion[: n + 1])
        later = by_completion[n + 1 :]
        overtaken = sorted(i.requested for i in later if i.requested < upto)
        done = by_completion[: n + 1]
        pending = sorted(
            k.requested
            for k in later
            if not k.data
            and any(j.data and j.groups & k.groups and j.completed >= k.requested for j in done)
        )
        if overtaken or pending:
            why: dict[str, Any] = {"as_of": c, "hudi_as_of": upto}
            if overtaken:
                why["requested_earlier_completed_later"] = overtaken
            if pending:
                why["compaction_pending"] = pending
            skipped.append(why)
        else:
            points.append((c, upto))
    return points, skipped


def slice_keys(instants: list[Completed]) -> dict[str, set[str]]:
    """Per file group, the keys of the file slices hudi-rs files its logs under (each the
    requested time of the instant that opened it): every compaction's, and, when no compaction
    was requested before it completed, the requested time of the first log write to
    complete (hudi-rs opens a log-only slice with it; later logs join the newest slice
    keyed at or before their completion)."""
    keys: dict[str, set[str]] = {}
    compactions = [i for i in instants if not i.data]
    for k in compactions:
        for g in k.groups:
            keys.setdefault(g, set()).add(k.requested)
    first: dict[str, Completed] = {}
    for i in sorted(instants, key=lambda i: i.completed):
        if i.action == "deltacommit":
            for g in i.groups:
                first.setdefault(g, i)
    for g, f in first.items():
        if not any(g in k.groups and k.requested <= f.completed for k in compactions):
            keys.setdefault(g, set()).add(f.requested)
    return keys


def incremental_pulls(instants: list[Completed]) -> tuple[list[Pull], list[dict[str, Any]]]:
    """(one pull per completed data instant, from the completion before it to its own; the
    skipped ones, with the instants whose slices put its rows out of hudi-rs's pull: a
    slice of one of its groups keyed after its requested time, at or before its
    completion)."""
    by_completion = sorted(instants, key=lambda i: i.completed)
    keys = slice_keys(instants)
    pulls, skipped = [], []
    for n, inst in enumerate(by_completion):
        if not inst.data:
            continue
        if inst.archived:
            skipped.append({"instant": inst.requested, "archived": True})
            continue
        moved = sorted(
            {
                key
                for g in inst.groups
                for key in keys.get(g, ())
                if inst.requested < key <= inst.completed
            }
        )
        if moved:
            skipped.append({"instant": inst.requested, "slice_opened_by": moved})
        else:
            begin = by_completion[n - 1].completed if n else None
            pulls.append(Pull(inst.requested, begin, inst.completed))
    return pulls, skipped


def spread(items: list[Any], limit: int) -> list[Any]:
    """At most `limit` of `items`, evenly spaced, the last one always included."""
    if len(items) <= limit:
        return items
    if limit == 1:
        return items[-1:]
    step = (len(items) - 1) / (limit - 1)
    return [items[round(k * step)] for k in range(limit)]


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
            out[f"only_{side}"] = {"count": len(only), "keys": _sorted(only).to_pylist()}
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


def _sorted(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    return pc.take(values, pc.sort_indices(values)).slice(0, MAX_LISTED)


def _duplicated(keys: pa.ChunkedArray) -> dict[str, Any] | None:
    counts = pc.value_counts(keys)
    dup = pc.filter(counts.field("values"), pc.greater(counts.field("counts"), 1))
    return {"count": len(dup), "keys": _sorted(dup).to_pylist()} if len(dup) else None


def _different_values(engine: pa.Table, hudi: pa.Table, key: str) -> dict[str, Any]:
    """Keys in both whose other columns differ (nulls compare equal to nulls)."""
    values = [n for n in engine.column_names if n != key]
    renamed = hudi.rename_columns([n if n == key else f"{n}\x00hudi" for n in hudi.column_names])
    joined = engine.join(renamed, key, join_type="inner")
    differs = pa.array([False] * joined.num_rows, pa.bool_())
    per_column = {}
    for name in values:
        a, b = joined.column(name), joined.column(f"{name}\x00hudi")
        ne = pc.or_(pc.fill_null(pc.not_equal(a, b), False), pc.xor(pc.is_null(a), pc.is_null(b)))
        if pc.any(ne).as_py():
            per_column[name] = pc.sum(ne).as_py()
            differs = pc.or_(differs, ne)
    bad = joined.filter(differs)
    bad = bad.take(pc.sort_indices(bad.column(key)))
    items = [
        {
            "key": row[key],
            "engine": {n: row[n] for n in values},
            "hudi": {n: row[f"{n}\x00hudi"] for n in values},
        }
        for row in bad.slice(0, MAX_LISTED).to_pylist()
    ]
    return {"count": bad.num_rows, "columns": per_column, "items": items}


def read_limits(stored_rows: int) -> tuple[int, int]:
    """(time-travel points, pulls) to compare on a table that stores `stored_rows`."""
    reads = max(2, ROW_BUDGET // max(stored_rows, 1))
    points = min(MAX_TIME_TRAVEL, max(1, reads // 3))
    return points, min(MAX_PULLS, max(1, reads - points))


def hudi_reader(
    instants: list[Completed],
    engine: Reads,
    hudi: Reads,
    key: str,
    reader: str = "hudi-rs",
    limits: tuple[int, int] = (MAX_TIME_TRAVEL, MAX_PULLS),
    window_from: str | None = None,
    contested: list[Contested] | None = None,
    misfiled: list[Misfiled] | None = None,
) -> CheckResult:
    """Compare the two readers on the snapshot, the comparable time-travel points and
    incremental pulls (at most `limits`). An error of hudi-rs on a read is a disagreement
    (the engine's table must be readable by Hudi); an error of the engine's own read
    propagates. `window_from`: the cleaner's retention boundary (None: nothing cleaned);
    points and pulls before it are not compared. `contested`: keys the two readers merge in
    different orders, left out of the reads that hold both of their instants. `misfiled`:
    keys of archived log writes, left out of the snapshot and the points whose slices
    hudi-rs reads without them."""
    contested = contested or []
    misfiled = misfiled or []
    points, tt_skipped = time_travel_points(instants)
    pulls, pull_skipped = incremental_pulls(instants)
    if window_from is not None:
        inside = [(c, t) for c, t in points if c >= window_from]
        tt_skipped += [{"as_of": c, "out_of_window": True} for c, _ in points if c < window_from]
        pull_skipped += [
            {"instant": p.instant, "out_of_window": True}
            for p in pulls
            if p.begin is None or p.begin < window_from
        ]
        points = inside
        pulls = [p for p in pulls if p.begin is not None and p.begin >= window_from]
    chosen_points = spread(points, limits[0])
    chosen_pulls = spread(pulls, limits[1])
    disagreements: list[dict[str, Any]] = []

    reads_excluding = 0
    reads_excluding_archived = 0

    def compare(
        where: dict[str, Any],
        ours: Callable[[], pa.Table],
        theirs: Callable,
        read: tuple[str | None, str | None],
        view: tuple[str | None, str | None] | None = None,
    ) -> int:
        """Compare one read of the instants completed in `read` = (begin, end]; `view`:
        (engine as of, hudi-rs as of) of a snapshot or time-travel read. The engine's row
        count."""
        nonlocal reads_excluding, reads_excluding_archived
        mine = ours()
        excluded = [c.keys for c in contested if c.in_read(*read)]
        reads_excluding += bool(excluded)
        archived = [m.keys for m in misfiled if view is not None and m.in_view(*view)]
        reads_excluding_archived += bool(archived)
        excluded += archived
        try:
            diff = diff_rows(_without(mine, key, excluded), _without(theirs(), key, excluded), key)
        except Exception as e:  # hudi-rs failed the read, or returned what cannot compare
            diff = {"error": f"{type(e).__name__}: {e}"}
        if diff:
            disagreements.append({**where, **diff})
        return mine.num_rows

    snapshot_rows = compare(
        {"read": "snapshot"}, engine.snapshot, hudi.snapshot, (None, None), (None, None)
    )
    for c, upto in chosen_points:
        compare(
            {"read": "time_travel", "as_of": c, "hudi_as_of": upto},
            functools.partial(engine.as_of, c),
            functools.partial(hudi.as_of, upto),
            (None, c),
            (c, upto),
        )
    for p in chosen_pulls:
        compare(
            {"read": "incremental", "instant": p.instant, "begin": p.begin, "end": p.end},
            functools.partial(engine.incremental, p.begin, p.end),
            functools.partial(hudi.incremental, p.begin, p.end),
            (p.begin, p.end),
        )
    evidence = {
        "reader": reader,
        "instants": len(instants),
        "snapshot_rows": snapshot_rows,
        "time_travel": {
            "comparable": len(points),
            "compared": len(chosen_points),
            "skipped": {"count": len(tt_skipped), "items": capped(tt_skipped)},
        },
        "incremental": {
            "comparable": len(pulls),
            "compared": len(chosen_pulls),
            "skipped": {"count": len(pull_skipped), "items": capped(pull_skipped)},
        },
        "merge_order": {
            "reads_excluding_keys": reads_excluding,
            "skipped": {"count": len(contested), "items": capped(c.evidence() for c in contested)},
        },
        "archived_logs": {
            "reads_excluding_keys": reads_excluding_archived,
            "skipped": {"count": len(misfiled), "items": capped(m.evidence() for m in misfiled)},
        },
        "disagreements": {"count": len(disagreements), "items": capped(disagreements)},
    }
    if disagreements:
        return CheckResult(NAME, "invalid", evidence)
    reasons = [
        (not instants, "no completed instant: nothing was compared"),
        (snapshot_rows == 0, "the snapshot is empty: the readers agreed on nothing"),
    ]
    return fail_closed(NAME, evidence, reasons)
