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


def _judgeable(read: Mapping[str, Any], expected_accounts: int) -> bool:
    """Its total, and the accounts it saw where it is to see them all."""
    wants_accounts = read.get("expected_accounts", expected_accounts) is not None
    return read.get("total") is not None and not (wants_accounts and "accounts" not in read)


def _before_first_commit(read: Mapping[str, Any]) -> bool:
    """Read before anything completed (no point in time, no row): it shows no balance at
    all, so nothing to judge, neither a moved total nor a missing account."""
    return read.get("read_at", "") is None and not read.get("rows")


def _bad_read(
    read: Mapping[str, Any], expected_total: float, expected_accounts: int
) -> dict[str, Any] | None:
    """Where the read was and what it saw, if its total moved or it missed an account."""
    # An incremental pull sees only the transfers it covers: its own expectation
    # (their legs sum to zero) travels with it, and it need not see every account.
    want_total = read.get("expected_total", expected_total)
    want_accounts = read.get("expected_accounts", expected_accounts)
    total, seen = read["total"], _account_count(read.get("accounts"))
    accounts_ok = want_accounts is None or seen == want_accounts
    if _same(total, want_total) and accounts_ok:
        return None
    where = {k: read[k] for k in ("reader", "read_kind", "as_of", "begin", "end") if k in read}
    return {**where, "total": total, "accounts": seen}


def _by_kind(reads: list[Mapping[str, Any]]) -> dict[str, int]:
    kinds: dict[str, int] = {}
    for read in reads:
        kinds[read.get("read_kind", "?")] = kinds.get(read.get("read_kind", "?"), 0) + 1
    return kinds


def _unknown_reasons(
    reads: list[Mapping[str, Any]],
    judged: list[Mapping[str, Any]],
    before_first: list[Mapping[str, Any]],
    failure_reason: str | None,
) -> list[tuple[bool, str | None]]:
    """Why no bad read shows nothing: a read without its total, or no read that saw the
    accounts at all, for one."""
    saw_accounts = any(
        _account_count(r.get("accounts")) for r in judged if r.get("read_kind") != "incremental"
    )
    return [
        (not reads, "every read failed"),
        (
            len(judged) + len(before_first) < len(reads),
            "reads without a total or the accounts they saw",
        ),
        (bool(reads) and not judged, "no read saw a committed table"),
        (bool(judged) and not saw_accounts, "no read saw an account"),
        (failure_reason is not None, failure_reason),
    ]


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
    before_first = [r for r in reads if _before_first_commit(r)]
    judged = [r for r in reads if not _before_first_commit(r) and _judgeable(r, expected_accounts)]
    verdicts = (_bad_read(r, expected_total, expected_accounts) for r in judged)
    bad = [v for v in verdicts if v is not None]
    failures, failure_reason = failed_reads(reads, failed)
    evidence = {
        "reads": len(reads),
        "by_kind": _by_kind(reads),
        "expected_total": expected_total,
        "expected_accounts": expected_accounts,
        "bad_reads": {"count": len(bad), "items": capped(bad)},
        "without_total": len(reads) - len(judged) - len(before_first),  # or its accounts
        "before_first_commit": len(before_first),
        "failed_reads": failures,
    }
    if bad:
        return CheckResult(NAME, "invalid", evidence)
    return fail_closed(
        NAME, evidence, _unknown_reasons(reads, judged, before_first, failure_reason)
    )
