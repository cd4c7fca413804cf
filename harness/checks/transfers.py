"""Do the final balances hold every transfer the batch writers made, each once?

A transfer's outcome as its writer saw it is evidence about the client, not about the
table: `ok` must be in the balances exactly once; `conflict` (every attempt aborted by
OCC before its commit) must not be; `error` is indeterminate, as in Jepsen: the last
attempt may have committed before the error reached the client (Hudi's post-commit
table services throw from inside `commit`). The balances must equal the opening ones plus
every `ok` transfer plus some subset of the indeterminate ones; which subset is the
evidence of writes reported failed that took effect. A lost update or a transfer applied
twice leaves balances no subset explains.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from harness.checks.result import Verdict

MAX_INDETERMINATE = 12  # 4,096 subsets; more and the check says unknown, not a guess


def _apply(balances: dict[int, int], txns: Sequence[Mapping[str, Any]]) -> dict[int, int]:
    out = dict(balances)
    for txn in txns:
        source, target = txn["accounts"]
        out[source] = out.get(source, 0) - int(txn["amount"])
        out[target] = out.get(target, 0) + int(txn["amount"])
    return out


def _label(txn: Mapping[str, Any]) -> dict[str, Any]:
    keys = ("writer", "t", "accounts", "amount", "attempts", "outcome", "error")
    return {k: txn.get(k) for k in keys}


def reconcile(
    final: Mapping[int, int], txns: Sequence[Mapping[str, Any]], accounts: int, opening: int
) -> tuple[Verdict, dict[str, Any]]:
    """(verdict, evidence) of the final balances against the reported transfers."""
    transfers = [t for t in txns if t.get("op") == "transfer" and t.get("accounts")]
    done = [t for t in transfers if t["outcome"] == "ok"]
    unsure = [t for t in transfers if t["outcome"] not in ("ok", "conflict")]
    evidence: dict[str, Any] = {
        "committed": len(done),
        "aborted": sum(1 for t in transfers if t["outcome"] == "conflict"),
        "indeterminate": len(unsure),
    }
    if len(unsure) > MAX_INDETERMINATE:
        reason = f"{len(unsure)} indeterminate transfers: too many subsets to try"
        return "unknown", {**evidence, "reason": reason}
    base = _apply(dict.fromkeys(range(accounts), opening), done)
    want = {a: int(final[a]) for a in final}
    for size in range(len(unsure) + 1):
        for subset in itertools.combinations(unsure, size):
            if _apply(base, subset) == want:
                applied = [_label(t) for t in subset]
                return "valid", {**evidence, "reported_failed_but_applied": applied}
    difference = {a: want.get(a, 0) - base.get(a, 0) for a in sorted({*want, *base})}
    return "invalid", {**evidence, "unexplained_difference": difference}
