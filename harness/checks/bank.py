"""Bank: atomic multi-row visibility. Every snapshot, as-of read and incremental pull in
bank mode keeps the total balance and sees every account."""

import math
from collections.abc import Iterable, Mapping
from typing import Any

from harness.checks.failed_reads import failed_reads
from harness.checks.result import CheckResult, capped, fail_closed

NAME = "bank"


def _same(a: float | None, b: float) -> bool:
    if a is None:
        return False
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def _account_count(accounts: Any) -> int | None:
    """`accounts` is a count, or the accounts (ids or {id: balance}) the read saw."""
    if accounts is None:
        return None
    return accounts if isinstance(accounts, int) else len(accounts)


def bank(
    reads: Iterable[Mapping[str, Any]],
    expected_total: float,
    expected_accounts: int,
    failed: Iterable[Mapping[str, Any]] = (),
) -> CheckResult:
    """A read may carry its own `expected_total` / `expected_accounts` (None: not checked).
    `failed`: the `read_error` events of the run's readers."""
    reads, failed = list(reads), list(failed)
    if not reads and not failed:
        return CheckResult(NAME, "unknown", {"reason": "no bank reads were recorded"})
    judged = [r for r in reads if r.get("total") is not None]
    bad = []
    for read in judged:
        # An incremental pull sees only the transfers it covers: its own expectation
        # (their legs sum to zero) travels with it, and it need not see every account.
        want_total = read.get("expected_total", expected_total)
        want_accounts = read.get("expected_accounts", expected_accounts)
        total, seen = read["total"], _account_count(read.get("accounts"))
        accounts_ok = want_accounts is None or seen == want_accounts
        if not _same(total, want_total) or not accounts_ok:
            where = {
                k: read[k] for k in ("reader", "read_kind", "as_of", "begin", "end") if k in read
            }
            bad.append({**where, "total": total, "accounts": seen})
    kinds: dict[str, int] = {}
    for read in reads:
        kinds[read.get("read_kind", "?")] = kinds.get(read.get("read_kind", "?"), 0) + 1
    failures, failure_reason = failed_reads(reads, failed)
    evidence = {
        "reads": len(reads),
        "by_kind": kinds,
        "expected_total": expected_total,
        "expected_accounts": expected_accounts,
        "bad_reads": {"count": len(bad), "items": capped(bad)},
        "without_total": len(reads) - len(judged),
        "failed_reads": failures,
    }
    if bad:
        return CheckResult(NAME, "invalid", evidence)
    # A read without its total, or no read that saw the accounts at all, shows nothing.
    saw_accounts = any(
        _account_count(r.get("accounts")) for r in judged if r.get("read_kind") != "incremental"
    )
    reasons = [
        (not reads, "every read failed"),
        (len(judged) < len(reads), "reads without a total"),
        (bool(judged) and not saw_accounts, "no read saw an account"),
        (failure_reason is not None, failure_reason),
    ]
    return fail_closed(NAME, evidence, reasons)
