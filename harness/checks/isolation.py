"""Isolation: a read never sees uncommitted rows, and a read "as of T" (or an incremental pull
between completion times) returns the same answer when repeated at the end of the run.

A read is a dict: read_kind, as_of / begin / end, rows, fingerprint (see `fingerprint`),
uncommitted_rows, reader. Reads are matched to their repeat by (read_kind, as_of, begin, end).
"""

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from harness.checks.arrays import as_arrow
from harness.checks.result import CheckResult, capped

NAME = "isolation"


def fingerprint(ids: Any) -> str:
    """An order-independent hash of a multiset of ids (row count + wrapping sum of hashes).

    Order-independent because a scan's row order is not part of its answer; a sum, not a
    set, so a duplicated row changes it. pandas' hash is deterministic across processes.
    """
    values = as_arrow(ids).to_pandas()
    hashed = pd.util.hash_pandas_object(values, index=False).to_numpy(np.uint64)
    return f"{len(hashed)}:{int(hashed.sum(dtype=np.uint64)):016x}"


def _key(read: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple(read.get(k) for k in ("read_kind", "as_of", "begin", "end"))


def isolation(
    reads: Iterable[Mapping[str, Any]], repeated: Iterable[Mapping[str, Any]]
) -> CheckResult:
    reads = list(reads)
    if not reads:
        return CheckResult(NAME, "unknown", {"reason": "no reads were recorded during the run"})
    final: dict[tuple[Any, ...], Mapping[str, Any]] = {_key(r): r for r in repeated}
    uncommitted = [r for r in reads if (r.get("uncommitted_rows") or 0) > 0]
    changed, unmatched = [], []
    for read in reads:
        again = final.get(_key(read))
        if again is None:
            unmatched.append(_key(read))
        elif (read.get("rows"), read.get("fingerprint")) != (
            again.get("rows"),
            again.get("fingerprint"),
        ):
            changed.append(
                {
                    "read": dict(
                        zip(("read_kind", "as_of", "begin", "end"), _key(read), strict=True)
                    ),
                    "reader": read.get("reader"),
                    "rows_then": read.get("rows"),
                    "rows_at_end": again.get("rows"),
                }
            )
    evidence = {
        "reads": len(reads),
        "compared": len(reads) - len(unmatched),
        "uncommitted_seen": {
            "count": len(uncommitted),
            "items": capped(
                {
                    "reader": r.get("reader"),
                    "read_kind": r.get("read_kind"),
                    "as_of": r.get("as_of"),
                    "uncommitted_rows": r["uncommitted_rows"],
                }
                for r in uncommitted
            ),
        },
        "changed": {"count": len(changed), "items": capped(changed)},
        "not_repeated": {"count": len(unmatched), "items": capped(list(k) for k in unmatched)},
    }
    if uncommitted or changed:
        verdict = "invalid"
    elif unmatched:
        verdict = "unknown"  # fail closed: an answer never re-read proves nothing
    else:
        verdict = "valid"
    return CheckResult(NAME, verdict, evidence)
