"""The bank's opening balances committed to a table, and a reader's as-of read of them
(a history event as harness/workload/readers.py records it): evidence a check can use."""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.table import Table
from harness.checks import fingerprint
from harness.pipeline.events import OPENING_BALANCE, EventSpec, opening_balances


def commit_opening_balances(table: Table, accounts: int) -> dict[str, Any]:
    """Commit the opening balances of `accounts`; returns an as-of read of that commit."""
    spec = EventSpec(mode="bank", seed=1, partitions=2, accounts=accounts)
    instant = table.start_instant()
    stats = table.write_files(instant, opening_balances(spec), "insert")
    completed = table.commit(instant, stats)
    return {
        "t": 1.0,
        "kind": "read",
        "src": "reader:0",
        "reader": "reader:0",
        "read_kind": "as_of",
        "as_of": completed,
        "read_at": completed,
        "rows": accounts,
        "fingerprint": fingerprint(-1 - np.arange(accounts)),
        "instants": {instant.requested_time: accounts},
        "files": {s.file_name: s.num_rows for s in stats},
        "total": accounts * OPENING_BALANCE,
        "accounts": accounts,
    }
