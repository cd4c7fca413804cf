"""Which reads two Hudi readers of one engine table can compare: the time-travel points and
incremental pulls whose instants both select alike (the rules, and why, are in
harness/checks/hudi_reader.py), spread over the table's history within a row budget and
the cleaner's retention window. Planned before any read, so that a reader run as a batch
(Java Hudi, in a JVM of its own) is asked for exactly the reads compared."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from harness.checks.result import capped

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


def read_limits(stored_rows: int) -> tuple[int, int]:
    """(time-travel points, pulls) to compare on a table that stores `stored_rows`."""
    reads = max(2, ROW_BUDGET // max(stored_rows, 1))
    points = min(MAX_TIME_TRAVEL, max(1, reads // 3))
    return points, min(MAX_PULLS, max(1, reads - points))


@dataclass
class ReadPlan:
    """The reads compared (`points`: (engine as of c, other reader as of T); `pulls`), how
    many were comparable, and the ones skipped with the reason."""

    points: list[tuple[str, str]]
    pulls: list[Pull]
    comparable_points: int
    comparable_pulls: int
    points_skipped: list[dict[str, Any]] = field(default_factory=list)
    pulls_skipped: list[dict[str, Any]] = field(default_factory=list)

    def evidence(self) -> dict[str, Any]:
        """What was compared of each kind, out of how many comparable, and what not, why."""
        return {
            "time_travel": _tally(self.comparable_points, self.points, self.points_skipped),
            "incremental": _tally(self.comparable_pulls, self.pulls, self.pulls_skipped),
        }


def _tally(comparable: int, compared: list[Any], skipped: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "comparable": comparable,
        "compared": len(compared),
        "skipped": {"count": len(skipped), "items": capped(skipped)},
    }


def plan_reads(
    instants: list[Completed],
    limits: tuple[int, int] = (MAX_TIME_TRAVEL, MAX_PULLS),
    window_from: str | None = None,
    refused: Callable[[str], str | None] = lambda _: None,
) -> ReadPlan:
    """The comparable points and pulls, at most `limits`; those before the cleaner's
    retention boundary `window_from` (None: nothing cleaned) are skipped, their files gone,
    and so are the points whose time travel to T the other reader refuses by design
    (`refused(T)`: why, or None)."""
    points, tt_skipped = time_travel_points(instants)
    refusals = [(c, t, refused(t)) for c, t in points]
    tt_skipped += [{"as_of": c, "hudi_as_of": t, "refused": why} for c, t, why in refusals if why]
    points = [(c, t) for c, t, why in refusals if not why]
    pulls, pull_skipped = incremental_pulls(instants)
    if window_from is not None:
        tt_skipped += [{"as_of": c, "out_of_window": True} for c, _ in points if c < window_from]
        pull_skipped += [
            {"instant": p.instant, "out_of_window": True}
            for p in pulls
            if p.begin is None or p.begin < window_from
        ]
        points = [(c, t) for c, t in points if c >= window_from]
        pulls = [p for p in pulls if p.begin is not None and p.begin >= window_from]
    return ReadPlan(
        spread(points, limits[0]),
        spread(pulls, limits[1]),
        len(points),
        len(pulls),
        tt_skipped,
        pull_skipped,
    )
