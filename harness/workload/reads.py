"""One read of the table and the record the checks need (docs/history.md, `read`)."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from engine.clock import format_instant, parse_instant
from engine.table import Table
from harness.checks import fingerprint

COLUMNS = ["id", "event_id", "account", "amount"]
COMMIT_TIME = "_hoodie_commit_time"
FILE_NAME = "_hoodie_file_name"
META = [COMMIT_TIME, FILE_NAME]  # where each row came from: its instant and its data file
SWEEP_POINTS = 100  # completed instants the final bank sweep reads as of (at most)


def bank_fields(rows: pa.Table, read_kind: str) -> dict[str, Any]:
    """The bank check's facts of one read: its total and the accounts it saw."""
    if read_kind == "incremental":
        # A pull holds whole transfers only: its legs (stream rows) sum to zero.
        legs = rows.filter(pc.greater_equal(rows.column("event_id"), 0))
        total = pc.sum(legs.column("amount")).as_py() or 0
        return {"total": int(total), "expected_total": 0, "expected_accounts": None}
    accounts = rows.filter(pc.less(rows.column("id"), 0)).column("account")
    total = pc.sum(rows.column("amount")).as_py() or 0
    return {"total": int(total), "accounts": len(pc.unique(accounts))}


def perform_read(
    table: Table,
    read_kind: str,
    *,
    as_of: str | None = None,
    begin: str | None = None,
    end: str | None = None,
    bank: bool = False,
) -> dict[str, Any]:
    """Run a snapshot / as_of / incremental read; return the facts the checks compare."""
    if read_kind == "snapshot":
        rows = table.snapshot(columns=[*COLUMNS, *META], with_meta=True)
    elif read_kind == "as_of":
        if as_of is None:
            raise ValueError("an as_of read needs as_of")
        rows = table.as_of(as_of, columns=[*COLUMNS, *META], with_meta=True)
    else:
        rows = table.incremental(begin, end, columns=[*COLUMNS, *META], with_meta=True)
    record: dict[str, Any] = {
        "read_kind": read_kind,
        "as_of": as_of,
        "begin": begin,
        "end": end,
        "read_at": _point_in_time(table, as_of if read_kind == "as_of" else end),
        "rows": rows.num_rows,
        "fingerprint": fingerprint(rows.column("id")),
        # Rows per instant (requested time) the read returned: checked against the final
        # timeline (did the instant complete, and by the read's point in time?).
        "instants": {
            item["values"]: item["counts"]
            for item in pc.value_counts(rows.column(COMMIT_TIME)).to_pylist()
        },
        # Rows per data file they were read from: checked against the files the completed
        # instants own (a file none owns is an orphan, and rows of it a dirty read). Rows
        # without a file name are in no count: fewer counted than `rows` cannot be judged.
        "files": _file_counts(rows.column(FILE_NAME)),
    }
    if bank:
        record.update(bank_fields(rows, read_kind))
    return record


def _file_counts(column: pa.ChunkedArray) -> dict[str, int]:
    """Rows per file name (a null names no file: JSON would turn its key into "null")."""
    counts = pc.value_counts(column).to_pylist()
    return {item["values"]: item["counts"] for item in counts if item["values"] is not None}


def _point_in_time(table: Table, bound: str | None) -> str | None:
    """The completion time the read saw the table at: the latest completion time of the
    timeline the read just loaded (no reload in between), or the read's own bound if that
    is earlier. Rows of an instant that completed later must not be in the answer."""
    latest = table.timeline.last_completion_time()
    if bound is None or latest is None:
        return latest
    return min(bound, latest)


def sweep_reads(
    table: Table, rng: random.Random, window_from: str | None, points: int = SWEEP_POINTS
) -> list[dict]:
    """The reads the bank check makes of the final table: a snapshot, an as-of read at the
    completion time of every completed instant (evenly thinned to `points`), as many at
    random times between them, and the incremental pull between each two neighbours. All
    inside the cleaner's retention window as the judge recomputed it (`window_from`,
    harness/checks/retention.py): before it, files may be gone by design."""
    table.timeline.reload()
    boundary = window_from or ""
    times = sorted(
        {i.completed_at for i in table.timeline.completed(True) if i.completed_at >= boundary}
    )
    if len(times) > points:
        times = [times[round(k * (len(times) - 1) / (points - 1))] for k in range(points)]
    reads = [{**perform_read(table, "snapshot", bank=True), "reader": "final"}]
    for t in times:
        reads.append({**perform_read(table, "as_of", as_of=t, bank=True), "reader": "final"})
    if times:
        lo, hi = parse_instant(times[0]), parse_instant(times[-1])
        for _ in range(len(times)):
            t = format_instant(rng.randint(lo, hi))
            reads.append({**perform_read(table, "as_of", as_of=t, bank=True), "reader": "final"})
    for begin, end in itertools.pairwise(times):
        pull = perform_read(table, "incremental", begin=begin, end=end, bank=True)
        reads.append({**pull, "reader": "final"})
    return reads
