"""Exactly once: every event of a committed batch is readable once; uncertain batches are
all or nothing, in commit order; nothing appears that the source never produced.

A batch covers source event ids start_offset <= id < end_offset (ids are source offsets).
Commits are in checkpoint order (an ACK commits every instant before it), so the visible
batches are a prefix of the batches in offset order: an uncertain batch may be absent only
if every batch after it is absent too (the rule exactly_once_upserts applies to upserts).
Vectorised (sort + searchsorted + bincount), so 10 million ids take about a second.
"""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from harness.checks.arrays import int_ids
from harness.checks.result import CheckResult, capped, fail_closed

NAME = "exactly_once"


def _merged_batches(expected: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
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
        if entry["end"] < entry["start"] or entry["start"] < 0:
            raise ValueError(
                f"batch {b['batch_id']} was recorded with the range "
                f"[{entry['start']}, {entry['end']}): offsets run from 0 upwards"
            )
        entry["certain"] = entry["certain"] or bool(b["certain"])
    return list(merged.values())


@dataclass
class IdSummary:
    """What the table shows of the event ids, reduced per batch. Computed from an id array
    here, or by Spark SQL for tables too large to read into one process."""

    observed_rows: int
    distinct_ids: int
    null_ids: int
    visible: np.ndarray  # distinct visible ids per batch, in batch order
    duplicated: int  # ids visible more than once
    extra_rows: int
    duplicated_listed: list[dict[str, int]]  # capped: [{id, count}]
    phantom: int  # ids outside every batch
    phantom_listed: list[int]  # capped
    missing_ids: Callable[[int], Iterable[int]]  # batch index -> its ids that are not visible
    # Rows whose event id is null, where the ids judged are not the event ids (bank legs);
    # None: the ids are the event ids, so `null_ids` counts them.
    null_event_ids: int | None = None


def batch_bounds(
    expected_batches: Iterable[Mapping[str, Any]],
) -> tuple[list[dict[str, Any]], np.ndarray, np.ndarray] | CheckResult:
    """(batches sorted by start, starts, ends), or an `unknown` result if they make no sense."""
    try:
        batches = sorted(_merged_batches(expected_batches), key=lambda b: b["start"])
    except ValueError as exc:
        return CheckResult(NAME, "unknown", {"reason": str(exc)})
    if not batches:
        return CheckResult(
            NAME, "unknown", {"reason": "no batches were recorded: nothing to check"}
        )
    starts = np.array([b["start"] for b in batches], np.int64)
    ends = np.array([b["end"] for b in batches], np.int64)
    overlapping = np.flatnonzero(starts[1:] < ends[:-1])
    if len(overlapping):
        pairs = [[batches[i]["batch_id"], batches[i + 1]["batch_id"]] for i in overlapping]
        return CheckResult(
            NAME, "unknown", {"reason": "batch offset ranges overlap", "batches": capped(pairs)}
        )
    return batches, starts, ends


def summarise_ids(observed_ids: Any, starts: np.ndarray, ends: np.ndarray) -> IdSummary:
    ids, null_ids = int_ids(observed_ids)
    uniq, counts = np.unique(ids, return_counts=True)
    owner = np.searchsorted(starts, uniq, side="right") - 1
    inside = (owner >= 0) & (uniq < ends[np.maximum(owner, 0)])
    duplicated = counts > 1
    phantom = uniq[~inside]

    def missing_ids(i: int) -> Iterable[int]:
        lo, hi = np.searchsorted(uniq, [starts[i], ends[i]])
        return np.setdiff1d(np.arange(starts[i], ends[i]), uniq[lo:hi], assume_unique=True)

    return IdSummary(
        observed_rows=len(ids) + int(null_ids),  # as on Spark: rows, with or without an id
        distinct_ids=len(uniq),
        null_ids=int(null_ids),
        visible=np.bincount(owner[inside], minlength=len(starts)),
        duplicated=int(duplicated.sum()),
        extra_rows=int((counts[duplicated] - 1).sum()),
        duplicated_listed=capped(
            {"id": int(i), "count": int(c)}
            for i, c in zip(uniq[duplicated], counts[duplicated], strict=True)
        ),
        phantom=len(phantom),
        phantom_listed=capped(phantom),
        missing_ids=missing_ids,
    )


def exactly_once(
    expected_batches: Iterable[Mapping[str, Any]],
    observed_ids: Any,
    null_event_ids: int | None = None,
) -> CheckResult:
    """`null_event_ids`: the rows without an event id, when `observed_ids` are not the event
    ids (bank legs); a row without one is a bug however its id looks."""
    bounds = batch_bounds(expected_batches)
    if isinstance(bounds, CheckResult):
        return bounds
    batches, starts, ends = bounds
    summary = summarise_ids(observed_ids, starts, ends)
    summary.null_event_ids = null_event_ids
    return judge(batches, summary)


def _out_of_order(
    batches: list[dict[str, Any]], certain: np.ndarray, visible: np.ndarray, sizes: np.ndarray
) -> list[dict[str, Any]]:
    """Batches with visible rows after an uncertain batch that is not wholly visible: a
    later commit without an earlier one. (A certain batch missing rows is `lost` already.)"""
    gaps = np.flatnonzero(~certain & (sizes > 0) & (visible < sizes))
    if not len(gaps):
        return []
    gap = int(gaps[0])
    after = gap + 1 + np.flatnonzero(visible[gap + 1 :] > 0)
    return [
        {
            "batch_id": batches[i]["batch_id"],
            "certain": bool(certain[i]),
            "visible": int(visible[i]),
            "after_uncertain_batch": batches[gap]["batch_id"],
            "its_visible": int(visible[gap]),
        }
        for i in after
    ]


def _batch_counts(certain: np.ndarray, visible: np.ndarray, sizes: np.ndarray) -> dict[str, int]:
    uncertain_at = np.flatnonzero(~certain)
    last_certain = np.flatnonzero(certain)[-1] if certain.any() else -1
    return {
        "certain": int(certain.sum()),
        "uncertain": int((~certain).sum()),
        "uncertain_visible": int((~certain & (visible == sizes)).sum()),
        "uncertain_absent": int((~certain & (visible == 0)).sum()),
        # The ground truth puts uncertain batches after the certain ones; one before a
        # certain batch changes no verdict (commit order holds it to the same rule).
        "uncertain_before_certain": int((uncertain_at < last_certain).sum()),
    }


def judge(batches: list[dict[str, Any]], summary: IdSummary) -> CheckResult:
    starts = np.array([b["start"] for b in batches], np.int64)
    ends = np.array([b["end"] for b in batches], np.int64)
    certain = np.array([b["certain"] for b in batches], bool)
    visible, sizes = summary.visible, ends - starts
    lost_batches = np.flatnonzero(certain & (visible < sizes))
    partial = np.flatnonzero(~certain & (visible > 0) & (visible < sizes))
    partial_listed = (
        {
            "batch_id": batches[i]["batch_id"],
            "start_offset": int(starts[i]),
            "end_offset": int(ends[i]),
            "visible": int(visible[i]),
            "expected": int(sizes[i]),
        }
        for i in partial
    )
    out_of_order = _out_of_order(batches, certain, visible, sizes)
    nulls = summary.null_event_ids
    null_events = summary.null_ids if nulls is None else nulls
    evidence = {
        "observed_rows": summary.observed_rows,
        "distinct_ids": summary.distinct_ids,
        "null_ids": summary.null_ids,
        "null_event_ids": null_events,
        "expected_rows_certain": int(sizes[certain].sum()),
        "batches": _batch_counts(certain, visible, sizes),
        "lost": {
            "count": int((sizes - visible)[lost_batches].sum()),
            "batches": capped(batches[i]["batch_id"] for i in lost_batches),
            "ids": capped(i for b in lost_batches for i in summary.missing_ids(int(b))),
        },
        "duplicated": {
            "count": summary.duplicated,
            "extra_rows": summary.extra_rows,
            "ids": summary.duplicated_listed,
        },
        "phantom": {"count": summary.phantom, "ids": summary.phantom_listed},
        "partial_batches": {"count": len(partial), "batches": capped(partial_listed)},
        "out_of_order": {"count": len(out_of_order), "batches": capped(out_of_order)},
    }
    bad = (
        len(lost_batches)
        or len(partial)
        or out_of_order
        or summary.duplicated
        or summary.phantom
        or summary.null_ids
        or null_events
    )
    if bad:
        return CheckResult(NAME, "invalid", evidence)
    return unless_nothing_certain(evidence, int(sizes[certain].sum()))


def unless_nothing_certain(evidence: dict[str, Any], certain_rows: int) -> CheckResult:
    """valid, or unknown when no batch was certain: all-or-nothing alone holds for an empty
    table too, so without a row that had to be visible nothing was shown."""
    why = "no certain batch with rows: nothing had to be visible"
    return fail_closed(NAME, evidence, [(certain_rows == 0, why)])
