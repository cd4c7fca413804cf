"""Timeline: requested and completion times unique and increasing, no completed instant
referencing a missing file, no instant committed twice or after its rollback, orphan
files never read.

Each instant is a dict: requested, completed (None unless completed), action, state,
generated_order (order the instants were generated in, by the runner's clock),
files_exist, missing_files, committed_count, rolled_back, and optionally commit_order
(order of the commits; without it the completion order is not checked, only uniqueness).
"""

import itertools
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from harness.checks.result import CheckResult, capped

NAME = "timeline"


def _not_increasing(ordered: list[Mapping[str, Any]], field: str) -> list[dict[str, Any]]:
    """Adjacent pairs where `field` does not strictly increase."""
    return [
        {"previous": prev[field], "instant": cur["requested"], field: cur[field]}
        for prev, cur in itertools.pairwise(ordered)
        if not prev[field] < cur[field]
    ]


def _duplicates(values: Iterable[Any]) -> list[dict[str, Any]]:
    return [{"time": v, "count": n} for v, n in Counter(values).items() if n > 1]


def timeline(
    instants: Iterable[Mapping[str, Any]], orphans: Mapping[str, Any] | None = None
) -> CheckResult:
    """`orphans`: {"files": [orphan data files left behind], "read": [orphans a read returned]}."""
    instants = list(instants)
    if not instants:
        return CheckResult(NAME, "unknown", {"reason": "no instants on the timeline"})
    # Instants whose generation or commit was not observed (made inside the engine, e.g.
    # rollbacks) have no order (None): they count for uniqueness, not for the order checks.
    by_generation = sorted(
        (i for i in instants if i.get("generated_order") is not None),
        key=lambda i: i["generated_order"],
    )
    completed = [i for i in instants if i.get("state") == "completed"]
    no_time = [i["requested"] for i in completed if i.get("completed") is None]
    timed = [i for i in completed if i.get("completed") is not None]
    ordered = [i for i in timed if i.get("commit_order") is not None]
    with_order = bool(ordered)
    by_commit = sorted(ordered, key=lambda i: i["commit_order"])

    violations: dict[str, list[Any]] = {
        "requested_duplicates": _duplicates(i["requested"] for i in instants),
        "requested_not_increasing": _not_increasing(by_generation, "requested"),
        "completion_duplicates": _duplicates(i["completed"] for i in timed),
        "completion_not_increasing": _not_increasing(by_commit, "completed"),
        "completed_without_completion_time": no_time,
        "missing_files": [
            {
                "instant": i["requested"],
                "action": i.get("action"),
                "files": capped(i.get("missing_files") or []),
            }
            for i in completed
            if not i.get("files_exist", True) or i.get("missing_files")
        ],
        "committed_twice": [
            {"instant": i["requested"], "count": i["committed_count"]}
            for i in instants
            if i.get("committed_count", 0) > 1
        ],
        # In this engine only inflight instants are rolled back; a rolled-back instant that
        # is (or was) completed lost data or came back from the dead (a zombie's commit).
        "committed_after_rollback": [
            i["requested"]
            for i in instants
            if i.get("rolled_back")
            and (i.get("committed_count", 0) > 0 or i.get("state") == "completed")
        ],
        "orphans_read": list((orphans or {}).get("read", [])),
    }
    evidence: dict[str, Any] = {
        "instants": len(instants),
        "completed": len(completed),
        "rolled_back": sum(1 for i in instants if i.get("rolled_back")),
        "commit_order_checked": with_order,
        "orphan_files": len((orphans or {}).get("files", [])),
    }
    for key, found in violations.items():
        evidence[key] = {"count": len(found), "items": capped(found)}
    bad = any(violations.values())
    return CheckResult(NAME, "invalid" if bad else "valid", evidence)
