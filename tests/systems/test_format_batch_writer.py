"""A table format's batch writer (harness/systems/spark_stream/batch_writer.py) and the
transaction loop it shares with Hudi's (harness/systems/hudi/transaction.py): what a
failure's Java classes make of it, and what the client reports."""

import json
import random
from collections.abc import Callable

import pytest

from harness.systems.hudi.transaction import transfer
from harness.systems.spark_stream.batch_writer import outcome_of, transfer_sql

ICEBERG = {
    "conflicts": ["ValidationException", "CommitFailedException"],
    "indeterminate": ["CommitStateUnknownException"],
}
VALIDATION = (
    "org.apache.iceberg.exceptions.ValidationException: Found conflicting files that can "
    'contain records matching ref(name="id") < 0: [/t/data/00000-44.parquet]'
)
UNKNOWN = (
    "org.apache.iceberg.exceptions.CommitStateUnknownException: database is locked (root "
    "cause: org.apache.iceberg.exceptions.CommitFailedException: Table was updated)"
)


def test_a_refused_commit_is_a_conflict_and_a_commit_of_unknown_state_an_error() -> None:
    assert outcome_of(VALIDATION, ICEBERG) == "conflict"
    assert outcome_of("org.apache.iceberg.exceptions.CommitFailedException: x", ICEBERG) == (
        "conflict"
    )
    # A cause that says the commit may have landed outweighs one that says it did not.
    assert outcome_of(UNKNOWN, ICEBERG) == "error"
    # A class named only in a stack frame, or nowhere, is no conflict.
    frame = "java.lang.RuntimeException: boom\n\tat o.a.i.ValidationException.check(V.java:49)"
    assert outcome_of(frame, ICEBERG) == "error"
    assert outcome_of(VALIDATION, {}) == "error"  # a format that names no conflicts


def test_a_transfer_keeps_to_the_accounts_rows_so_the_conflict_check_does_too() -> None:
    sql = transfer_sql("c.`ns`.`table`", 1, 3, 7)
    assert sql.startswith("MERGE INTO c.`ns`.`table` t USING (")
    assert "ON t.id = s.id AND t.id < 0 " in sql
    assert "CAST(-2 AS BIGINT) AS id, CAST(-7 AS BIGINT)" in sql
    assert "CAST(-4 AS BIGINT) AS id, CAST(7 AS BIGINT)" in sql


class Conflict(Exception):
    pass


def _failing(error: Exception) -> Callable[[int, int, int], None]:
    def execute(source: int, target: int, amount: int) -> None:
        raise error

    return execute


def test_a_conflict_is_retried_until_it_commits_or_the_attempts_run_out(
    capsys: pytest.CaptureFixture[str],
) -> None:
    cfg = {"accounts": 4, "max_attempts": 3, "writer": "w"}
    failures = iter([Conflict("ValidationException: a"), Conflict("ValidationException: b")])

    def execute(source: int, target: int, amount: int) -> None:
        error = next(failures, None)
        if error is not None:
            raise error

    def outcome(text: str) -> str:
        return "conflict" if "ValidationException" in text else "error"

    transfer(execute, outcome, cfg, random.Random(1))
    transfer(_failing(Conflict("ValidationException")), outcome, cfg, random.Random(2))
    transfer(_failing(OSError("gone")), outcome, cfg, random.Random(3))
    ok, refused, failed = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert (ok["outcome"], ok["attempts"], ok["error"]) == ("ok", 3, None)
    assert (refused["outcome"], refused["attempts"]) == ("conflict", 3)
    assert (failed["outcome"], failed["attempts"]) == ("error", 1)
    assert ok["accounts"][0] != ok["accounts"][1] and 1 <= ok["amount"] <= 50
