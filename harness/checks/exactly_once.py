"""Exactly once: every event of a committed batch is readable once; uncertain batches are
all or nothing; nothing appears that the source never produced.

A batch covers source event ids start_offset <= id < end_offset (ids are source offsets).
Vectorised (sort + searchsorted + bincount), so 10 million ids take about a second.
"""

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from harness.checks.arrays import int_ids
from harness.checks.result import CheckResult, capped

NAME = "exactly_once"


def merged_batches(expected: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One entry per batch id. A replayed batch is certain if any of its records is."""
    merged: dict[Any, dict[str, Any]] = {}
    for b in expected:
        entry = merged.setdefault(
            b["batch_id"],
            {
                "batch_id": b["batch_id"],
                "start": int(b["start_offset"]),
                "end": int(b["end_offset"]),
                "certain": False,
            },
        )
        if (entry["start"], entry["end"]) != (int(b["start_offset"]), int(b["end_offset"])):
            raise ValueError(f"batch {b['batch_id']} was recorded with two different ranges")
        entry["certain"] = entry["certain"] or bool(b["certain"])
    return list(merged.values())


def exactly_once(expected_batches: Iterable[Mapping[str, Any]], observed_ids: Any) -> CheckResult:
    try:
        batches = sorted(merged_batches(expected_batches), key=lambda b: b["start"])
    except ValueError as exc:
        return CheckResult(NAME, "unknown", {"reason": str(exc)})
    if not batches:
        return CheckResult(
            NAME, "unknown", {"reason": "no batches were recorded: nothing to check"}
        )
    starts = np.array([b["start"] for b in batches], np.int64)
    ends = np.array([b["end"] for b in batches], np.int64)
    certain = np.array([b["certain"] for b in batches], bool)
    overlapping = np.flatnonzero(starts[1:] < ends[:-1])
    if len(overlapping):
        pairs = [[batches[i]["batch_id"], batches[i + 1]["batch_id"]] for i in overlapping]
        return CheckResult(
            NAME, "unknown", {"reason": "batch offset ranges overlap", "batches": capped(pairs)}
        )

    ids, null_ids = int_ids(observed_ids)
    uniq, counts = np.unique(ids, return_counts=True)
    owner = np.searchsorted(starts, uniq, side="right") - 1
    inside = (owner >= 0) & (uniq < ends[np.maximum(owner, 0)])
    visible = np.bincount(owner[inside], minlength=len(batches))
    sizes = ends - starts

    lost_batches = np.flatnonzero(certain & (visible < sizes))
    partial = np.flatnonzero(~certain & (visible > 0) & (visible < sizes))
    duplicated = counts > 1
    phantom = uniq[~inside]

    evidence = {
        "observed_rows": len(ids),
        "distinct_ids": len(uniq),
        "null_ids": int(null_ids),
        "expected_rows_certain": int(sizes[certain].sum()),
        "batches": {
            "certain": int(certain.sum()),
            "uncertain": int((~certain).sum()),
            "uncertain_visible": int((~certain & (visible == sizes)).sum()),
            "uncertain_absent": int((~certain & (visible == 0)).sum()),
        },
        "lost": {
            "count": int((sizes - visible)[lost_batches].sum()),
            "batches": capped(batches[i]["batch_id"] for i in lost_batches),
            "ids": capped(_missing_ids(uniq, starts, ends, lost_batches)),
        },
        "duplicated": {
            "count": int(duplicated.sum()),
            "extra_rows": int((counts[duplicated] - 1).sum()),
            "ids": capped(
                {"id": int(i), "count": int(c)}
                for i, c in zip(uniq[duplicated], counts[duplicated], strict=True)
            ),
        },
        "phantom": {"count": len(phantom), "ids": capped(phantom)},
        "partial_batches": {
            "count": len(partial),
            "batches": capped(
                {
                    "batch_id": batches[i]["batch_id"],
                    "start_offset": int(starts[i]),
                    "end_offset": int(ends[i]),
                    "visible": int(visible[i]),
                    "expected": int(sizes[i]),
                }
                for i in partial
            ),
        },
    }
    bad = len(lost_batches) or len(partial) or duplicated.any() or len(phantom) or null_ids
    return CheckResult(NAME, "invalid" if bad else "valid", evidence)


def _missing_ids(
    uniq: np.ndarray, starts: np.ndarray, ends: np.ndarray, batch_indexes: np.ndarray
) -> Iterable[int]:
    """Ids of lost batches that are not visible, batch by batch (lazily: the list is capped)."""
    for i in batch_indexes:
        lo, hi = np.searchsorted(uniq, [starts[i], ends[i]])
        yield from np.setdiff1d(np.arange(starts[i], ends[i]), uniq[lo:hi], assume_unique=True)
