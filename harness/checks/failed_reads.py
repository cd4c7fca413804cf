"""Failed reads are evidence too: counted, and a reader whose reads of one kind all failed
left that kind untested (the isolation and bank checks are then unknown)."""

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from harness.checks.result import capped


def failed_reads(
    reads: Iterable[Mapping[str, Any]], failed: Iterable[Mapping[str, Any]]
) -> tuple[dict[str, Any], str | None]:
    """(evidence, reason to be unknown or None). A failure without a read kind (the reader
    failed outside any one read) never has a success to match: fail closed."""
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
        "never_succeeded": capped(never),
        "items": capped(
            {k: f[k] for k in ("reader", "read_kind", "as_of", "begin", "end", "error") if k in f}
            for f in failed
        ),
    }
    reason = "every read of a reader (of one kind) failed: untested" if never else None
    return evidence, reason
