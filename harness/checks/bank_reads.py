"""The bank check over one reader's reads of a system's final table: the total and the
accounts in each read (the snapshot, the table as of each commit, each incremental pull),
and the final balances against the transfers the batch writers reported (transfers.py):
a lost update keeps the total but not the balances."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from harness.checks.bank import bank
from harness.checks.result import CheckResult
from harness.checks.transfers import reconcile
from harness.pipeline.events import OPENING_BALANCE
from harness.workload.reads import bank_fields


def _records(
    snapshot: pa.Table | None,
    as_of: Mapping[Any, pa.Table],
    incremental: Mapping[tuple[Any, Any], pa.Table],
) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    if snapshot is not None:
        records.append({"read_kind": "snapshot", **bank_fields(snapshot, "snapshot")})
    for commit, rows in as_of.items():
        records.append({"read_kind": "as_of", "as_of": commit, **bank_fields(rows, "as_of")})
    for (begin, end), rows in incremental.items():
        pull = bank_fields(rows, "incremental")
        records.append({"read_kind": "incremental", "begin": begin, "end": end, **pull})
    return [{**r, "reader": "final"} for r in records]


def balances(snapshot: pa.Table) -> dict[int, int]:
    """The accounts' own rows (ids below zero): account -> balance."""
    rows = snapshot.filter(pc.less(snapshot.column("id"), 0))
    pairs = zip(rows["account"].to_pylist(), rows["amount"].to_pylist(), strict=True)
    return {int(a): int(b) for a, b in pairs}


def bank_of_reads(
    reader: str,
    snapshot: pa.Table | None,
    as_of: Mapping[Any, pa.Table],
    errors: Mapping[str, str],
    accounts: int,
    txns: Sequence[dict[str, Any]] = (),
    incremental: Mapping[tuple[Any, Any], pa.Table] | None = None,
) -> CheckResult:
    """`errors`: read label ("as_of/<commit>", "incremental/...") -> why it failed."""
    failed = [
        {"reader": "final", "read_kind": label.split("/", 1)[0], "error": message}
        for label, message in errors.items()
    ]
    records = _records(snapshot, as_of, incremental or {})
    result = bank(records, accounts * OPENING_BALANCE, accounts, failed)
    evidence: dict[str, Any] = {**result.evidence, "reader": reader}
    verdict = result.verdict
    if snapshot is not None and "account" in snapshot.column_names:
        found, evidence["transfers"] = reconcile(
            balances(snapshot), txns, accounts, OPENING_BALANCE
        )
        if found == "invalid" or (found == "unknown" and verdict == "valid"):
            verdict = found
    return CheckResult(result.name, verdict, evidence)
