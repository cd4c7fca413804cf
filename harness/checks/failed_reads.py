"""Failed reads are evidence too: a read that raised is one the check could not judge, so
any failure the reader did not excuse leaves isolation and bank unknown, not only a reader
whose reads of one kind all failed. The one excuse is the reader's own: a time travel or
pull that a clean moved out of the retention window is recorded as `read_out_of_window`
(harness/workload/readers.py), never as a `read_error`, so it never reaches `failed`."""

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from harness.checks.result import capped


def failed_reads(
    reads: Iterable[Mapping[str, Any]], failed: Iterable[Mapping[str, Any]]
) -> tuple[dict[str, Any], str | None]:
    """(evidence, reason to be unknown or None). `failed`: the unexcused failures (the
    `read_error` events). Any one of them is a reason: the rows it would have returned were
    never judged, and a failure without a read kind (outside any one read) could have hidden
    any of them."""
    succeeded = {(r.get("reader"), r.get("read_kind")) for r in reads}
    failed = list(failed)
    per_kind = Counter((f.get("reader"), f.get("read_kind")) for f in failed)
    never = [
        {"reader": reader, "read_kind": kind, "failed": n}
        for (reader, kind), n in per_kind.items()
        if (reader, kind) not in succeeded
    ]
    evidence = {
        "count": len(failed),
        "by_kind": capped(
            {"reader": reader, "read_kind": kind, "failed": n}
            for (reader, kind), n in per_kind.items()
        ),
        "never_succeeded": capped(never),
        "items": capped(
            {k: f[k] for k in ("reader", "read_kind", "as_of", "begin", "end", "error") if k in f}
            for f in failed
        ),
    }
    if not failed:
        return evidence, None
    kinds = ", ".join(sorted({str(kind) for _, kind in per_kind}))
    reason = f"{len(failed)} read(s) failed ({kinds}): their answers went unjudged"
    if never:
        reason += "; every read of a reader (of one kind) failed: untested"
    return evidence, reason
