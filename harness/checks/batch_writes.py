"""Batch writers' rows (`batch_writers.op` upsert or insert) against the writers' own
record: a second ground truth beside Spark's checkpoint, part of `exactly_once`.

Before each commit a batch writer records the rows it is about to commit (`txn_rows`:
keys and amounts, with the instant), and after it the commit (`txn_commit`, with the
completion time). A transaction with both is certain; one with rows but no commit record
is uncertain (it may have landed: the writer can fail or stop between its commit and its
record). For every key a certain transaction wrote, the table must hold the amount of the
last certain one to complete (or of an uncertain one): no row is a lost write, another
amount a stale or wrong one. A key only uncertain transactions wrote may be absent. A row
among the batch writers' keys that no transaction recorded is a phantom. Transfers (bank
mode) are judged by `bank`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from harness.checks.result import capped


def _expected(
    rows: Iterable[Mapping[str, Any]], completed: Mapping[str, str]
) -> tuple[dict[int, int], dict[int, set[int]]]:
    """(key -> amount of its last certain write, key -> amounts of its uncertain writes)."""
    last: dict[int, tuple[str, int]] = {}
    uncertain: dict[int, set[int]] = {}
    for txn in rows:
        done = completed.get(txn["instant"])
        for key, amount in zip(txn["keys"], txn["amounts"], strict=True):
            if done is None:
                uncertain.setdefault(key, set()).add(amount)
            elif key not in last or done > last[key][0]:
                last[key] = (done, amount)
    return {k: a for k, (_, a) in last.items()}, uncertain


def batch_writes(
    rows: Sequence[Mapping[str, Any]],
    commits: Sequence[Mapping[str, Any]],
    table: Mapping[int, int],
) -> tuple[bool, dict[str, Any]]:
    """(any violation, evidence). `rows`: the txn_rows events; `commits`: the txn_commit
    events; `table`: key -> amount of the final table's rows among the batch writers' keys."""
    completed = {c["instant"]: c["completed"] for c in commits if c.get("completed")}
    expected, uncertain = _expected(rows, completed)
    lost = sorted(k for k in expected if k not in table)
    wrong = sorted(
        k
        for k, amount in table.items()
        if k in expected and amount != expected[k] and amount not in uncertain.get(k, ())
    )
    phantom = sorted(
        k for k, a in table.items() if k not in expected and a not in uncertain.get(k, ())
    )
    evidence = {
        "transactions": {
            "certain": sum(r["instant"] in completed for r in rows),
            "uncertain": sum(r["instant"] not in completed for r in rows),
        },
        "keys": len(expected),
        "lost": {"count": len(lost), "keys": capped(lost)},
        "wrong_amount": {
            "count": len(wrong),
            "rows": capped(
                {"key": k, "amount": table[k], "last_committed_amount": expected[k]} for k in wrong
            ),
        },
        "phantom": {"count": len(phantom), "keys": capped(phantom)},
    }
    return bool(lost or wrong or phantom), evidence
