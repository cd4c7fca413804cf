"""A batch writer on a table format's table (Iceberg through its JDBC catalog): a Spark
application of its own beside the stream, committing one OCC transaction at a time
through the format's own SQL. Run with the project's python and pyspark 4.1, from one
JSON config file:

    python batch_writer.py CONFIG.json

A transfer is a read-modify-write done as the format's users do one: `MERGE INTO` with
`amount = t.amount + s.delta`, so the balances it reads are those of the snapshot its own
commit is validated against. The ON clause's `t.id < 0` keeps the MERGE to the accounts'
rows: the format's conflict check (serializable isolation) then asks only whether a
concurrent commit touched data that could hold an account, and the stream's appended legs
(ids from 0 up, in files whose column bounds say so) do not. A commit the format refuses
for a concurrent one (the config's `conflicts`) is retried up to `max_attempts` times;
any other failure ends the transaction as an error, indeterminate (it may have
committed). Every transaction is one JSON line on stdout ({"event": "txn", ...}); the
writer stops when the stop file appears.
"""

from __future__ import annotations

import os
import random
import re
import sys
import time
from typing import Any

from pyspark.sql import SparkSession

from harness.systems.hudi.script_io import emit, script_main
from harness.systems.hudi.transaction import stopped, transfer
from harness.systems.spark_stream.stream_driver import build_session

JAVA_CLASS = re.compile(r"(?:^|[\s(.])(\w+(?:Exception|Error)):")


def transfer_sql(table: str, source: int, target: int, amount: int) -> str:
    legs = " UNION ALL ".join(
        f"SELECT CAST({-1 - account} AS BIGINT) AS id, CAST({delta} AS BIGINT) AS delta"
        for account, delta in ((source, -amount), (target, amount))
    )
    return (
        f"MERGE INTO {table} t USING ({legs}) s ON t.id = s.id AND t.id < 0 "
        "WHEN MATCHED THEN UPDATE SET t.amount = t.amount + s.delta"
    )


def outcome_of(error: str, cfg: dict[str, Any]) -> str:
    """conflict (not committed, retried) or error (indeterminate), from the Java classes
    the failure and its causes name."""
    names = set(JAVA_CLASS.findall(error))
    if names & set(cfg.get("indeterminate", ())):
        return "error"
    return "conflict" if names & set(cfg.get("conflicts", ())) else "error"


def wait_for_accounts(spark: SparkSession, table: str, timeout_s: float) -> None:
    """Until the stream's driver committed the opening balances (its JVM starts beside
    this one's, and the table may not exist yet)."""
    deadline, last = time.monotonic() + timeout_s, None
    while time.monotonic() <= deadline:
        try:
            row = spark.sql(f"SELECT count(*) FROM {table} WHERE id < 0").first()
            if row is not None and row[0] > 0:
                return
        except Exception as exc:  # no table yet: Spark's AnalysisException
            last = exc
        time.sleep(0.5)
    raise TimeoutError(f"no opening balances in {table} after {timeout_s} s") from last


def run(cfg: dict[str, Any]) -> int:
    spark = build_session({**cfg, "app_name": cfg["writer"], "shuffle_partitions": 1})
    emit("session", pid=os.getpid())
    wait_for_accounts(spark, cfg["table_sql"], float(cfg["table_timeout_s"]))
    emit("started", pid=os.getpid())
    rng = random.Random(int(cfg["seed"]))

    def execute(source: int, target: int, amount: int) -> None:
        spark.sql(transfer_sql(cfg["table_sql"], source, target, amount))

    while not stopped(cfg["stop_file"], float(cfg["every_s"])):
        transfer(execute, lambda error: outcome_of(error, cfg), cfg, rng)
    emit("stopped")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(script_main(sys.argv, run))
