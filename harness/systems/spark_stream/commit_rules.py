"""The rules of a table format's commit log, judged from outside (the `timeline` check of
Delta and Iceberg): what a log of counters must show whatever the format.

- contiguous: versions first..N with no gap (a missing version is a lost commit; a
  version file written twice cannot be seen twice, its second write is the overwrite);
- order: a later poll never finds a lower version than an earlier poll found;
- sequence: where a commit carries a sequence number (Iceberg), it rises with the version;
- lineage: where it names its snapshot and that snapshot's parent (Iceberg), each new
  snapshot's parent is the snapshot current before it (no commit built on a stale base);
- added_twice: no data file is added by two commits;
- missing_file: every file a live commit added is on storage.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.systems.spark_stream.commit_watch import SeenCommit


@dataclass(frozen=True)
class LogViolation:
    rule: str
    detail: str


def _order(entries: Sequence[SeenCommit]) -> list[LogViolation]:
    out, highest = [], -1
    for poll in sorted({e.poll for e in entries}):
        found = [e.version for e in entries if e.poll == poll]
        if min(found) < highest:
            out.append(LogViolation("order", f"version {min(found)} appeared after {highest}"))
        highest = max(highest, *found)
    return out


def _lineage(ordered: Sequence[SeenCommit]) -> list[LogViolation]:
    """Each commit that makes a new snapshot current: its parent is the snapshot current
    before it, its sequence number above that one's."""
    out = []
    made = [e for e in ordered if e.snapshot is not None]
    new = [(b, a) for b, a in itertools.pairwise(made) if a.snapshot != b.snapshot]
    for before, e in new:
        if e.parent != before.snapshot:
            detail = f"v{e.version}: snapshot {e.snapshot}'s parent is {e.parent}"
            out.append(LogViolation("lineage", f"{detail}, not {before.snapshot}"))
        if None not in (e.sequence, before.sequence) and e.sequence <= before.sequence:  # type: ignore[operator]
            detail = f"v{e.version}: sequence number {e.sequence} after {before.sequence}"
            out.append(LogViolation("sequence", detail))
    return out


def _files(ordered: Sequence[SeenCommit], table: Path) -> list[LogViolation]:
    out: list[LogViolation] = []
    owner: dict[str, int] = {}
    for e in ordered:
        for path in e.added:
            if path in owner:
                out.append(LogViolation("added_twice", f"{path}: v{owner[path]} and v{e.version}"))
            owner[path] = e.version
    live = set(owner) - {p for e in ordered for p in e.removed}
    out += [
        LogViolation("missing_file", f"{path} (added by v{owner[path]})")
        for path in sorted(live)
        if not (table / path).is_file()
    ]
    return out


def judge(entries: Sequence[SeenCommit], table: str | Path, first: int) -> list[LogViolation]:
    ordered = sorted(entries, key=lambda e: e.version)
    versions = [e.version for e in ordered]
    out = []
    if versions != list(range(first, first + len(versions))):
        out.append(LogViolation("contiguous", f"versions seen: {versions[:20]}"))
    return [*out, *_order(entries), *_lineage(ordered), *_files(ordered, Path(table))]
