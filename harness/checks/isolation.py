"""Isolation: a read never returns rows of an instant that had not completed by the read's
point in time (whether it never completes or completes later: a dirty read either way), and
a read "as of T" (or an incremental pull between completion times) returns the same answer
when repeated at the end of the run.

A read is a dict (docs/history.md, `read`): reader, read_kind, as_of / begin / end, read_at
(the completion time it read at; None before any completion), rows, fingerprint (see
`fingerprint`), instants ({requested time: rows}). Reads are matched to their repeat by
(read_kind, as_of, begin, end); snapshots are not repeated (the table moved on).
"""

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from harness.checks.arrays import as_arrow
from harness.checks.failed_reads import failed_reads
from harness.checks.result import CheckResult, capped, fail_closed

NAME = "isolation"
_WHERE = ("read_kind", "as_of", "begin", "end")


def fingerprint(ids: Any) -> str:
    """An order-independent hash of a multiset of ids (row count + wrapping sum of hashes).

    Order-independent because a scan's row order is not part of its answer; a sum, not a
    set, so a duplicated row changes it. pandas' hash is deterministic across processes.
    """
    values = as_arrow(ids).to_pandas()
    hashed = pd.util.hash_pandas_object(values, index=False).to_numpy(np.uint64)
    return f"{len(hashed)}:{int(hashed.sum(dtype=np.uint64)):016x}"


def _key(read: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple(read.get(k) for k in _WHERE)


def _judgeable(read: Mapping[str, Any]) -> bool:
    return "read_at" in read and isinstance(read.get("instants"), Mapping) and "rows" in read


def _accounted(read: Mapping[str, Any]) -> bool:
    """Its instants account for every row it returned: a row no instant accounts for could
    be a dirty one, so a read whose counts disagree cannot show the absence of one."""
    counts = list(read["instants"].values())
    if not all(isinstance(n, int) for n in counts) or not isinstance(read["rows"], int):
        return False
    return sum(counts) == read["rows"]


def _dirty(read: Mapping[str, Any], completed: Mapping[str, str]) -> dict[str, list[dict]]:
    """Rows the read returned of instants outside its window: never completed, completed
    after the read's point in time, or (a pull) completed at or before its begin."""
    at, begin = read["read_at"], read.get("begin") if read["read_kind"] == "incremental" else None
    where = {"reader": read.get("reader"), **{k: read.get(k) for k in _WHERE}, "read_at": at}
    found: dict[str, list[dict]] = {"never": [], "after": [], "before": []}
    for instant, rows in read["instants"].items():
        done = completed.get(instant)
        if done is None:
            which = "never"
        elif at is None or done > at:
            which = "after"
        elif begin is not None and done <= begin:
            which = "before"
        else:
            continue
        found[which].append({**where, "instant": instant, "completed": done, "rows": rows})
    return found


def _listed(items: list[Any]) -> dict[str, Any]:
    return {"count": len(items), "items": capped(items)}


def _dirty_reads(
    judged: list[Mapping[str, Any]], completed: Mapping[str, str]
) -> dict[str, list[dict]]:
    dirty: dict[str, list[dict]] = {"never": [], "after": [], "before": []}
    for read in judged:
        for which, items in _dirty(read, completed).items():
            dirty[which] += items
    return dirty


def _compare_repeats(
    judged: list[Mapping[str, Any]],
    repeated: Iterable[Mapping[str, Any]],
    outside: set[tuple[Any, ...]],
) -> tuple[list[dict[str, Any]], list[list[Any]]]:
    """(as-of reads and pulls whose repeat at the end answered otherwise, those never
    repeated); one whose point left the retention window is neither."""
    final: dict[tuple[Any, ...], Mapping[str, Any]] = {_key(r): r for r in repeated}
    changed, unmatched = [], []
    for read in judged:
        if read["read_kind"] == "snapshot":
            continue
        again = final.get(_key(read))
        if again is None and _key(read) in outside:
            continue
        if again is None:
            unmatched.append(list(_key(read)))
        elif (read["rows"], read.get("fingerprint")) != (again["rows"], again.get("fingerprint")):
            changed.append(
                {
                    "read": dict(zip(_WHERE, _key(read), strict=True)),
                    "reader": read.get("reader"),
                    "rows_then": read["rows"],
                    "rows_at_end": again["rows"],
                }
            )
    return changed, unmatched


def _unknown_reasons(
    reads: list[Mapping[str, Any]],
    judged: list[Mapping[str, Any]],
    unaccounted: list[dict[str, Any]],
    unmatched: list[list[Any]],
    failure_reason: str | None,
) -> list[tuple[bool, str | None]]:
    """Why no dirty or changed read shows nothing."""
    return [
        (not reads, "every read failed"),
        (len(judged) < len(reads), "reads without their point in time or instants"),
        (bool(unaccounted), "reads whose rows their instants do not account for"),
        (bool(unmatched), "reads never repeated at the end"),
        (bool(judged) and not any(r["rows"] for r in judged), "no read returned a row"),
        (failure_reason is not None, failure_reason),
    ]


def isolation(
    reads: Iterable[Mapping[str, Any]],
    repeated: Iterable[Mapping[str, Any]],
    completed: Mapping[str, str],
    failed: Iterable[Mapping[str, Any]] = (),
    out_of_window: Iterable[Mapping[str, Any]] = (),
) -> CheckResult:
    """`reads`: every read made during the run; `repeated`: its as-of reads and pulls made
    again at the end; `completed`: requested -> completion time of every instant of the
    final timeline that completed and was not rolled back; `failed`: `read_error` events;
    `out_of_window`: reads whose point a clean has since moved out of the retention window
    (their files may be gone: not repeated, so not compared, and not a failure)."""
    reads, failed = list(reads), list(failed)
    outside = {_key(r) for r in out_of_window}
    if not reads and not failed:
        return CheckResult(NAME, "unknown", {"reason": "no reads were recorded during the run"})
    judged = [r for r in reads if _judgeable(r)]
    dirty = _dirty_reads(judged, completed)
    changed, unmatched = _compare_repeats(judged, repeated, outside)
    failures, failure_reason = failed_reads(reads, failed)
    unaccounted = [
        {**{k: r.get(k) for k in ("reader", *_WHERE)}, "rows": r["rows"]}
        for r in judged
        if not _accounted(r)
    ]
    evidence = {
        "reads": len(reads),
        "compared": sum(
            1 for r in judged if r["read_kind"] != "snapshot" and _key(r) not in outside
        )
        - len(unmatched),
        "out_of_window": len(outside),
        "uncommitted_seen": _listed(dirty["never"]),
        "completed_after_read": _listed(dirty["after"]),
        "pulled_before_begin": _listed(dirty["before"]),
        "changed": _listed(changed),
        "not_repeated": _listed(unmatched),
        "unjudged": _listed(
            [{k: r.get(k) for k in ("reader", *_WHERE)} for r in reads if not _judgeable(r)]
        ),
        "unaccounted_rows": _listed(unaccounted),
        "failed_reads": failures,
    }
    if any(dirty.values()) or changed:
        return CheckResult(NAME, "invalid", evidence)
    return fail_closed(
        NAME, evidence, _unknown_reasons(reads, judged, unaccounted, unmatched, failure_reason)
    )
