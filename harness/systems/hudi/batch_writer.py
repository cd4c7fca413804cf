"""One Hudi batch writer: a Spark application of its own beside the stream, committing one
OCC transaction at a time through Hudi's own SQL and lock provider.

Run by the Hudi runtime's python (pyspark 3.5), not the project's: it imports only pyspark
and the standard library, and takes everything from one JSON config file:

    python batch_writer.py CONFIG.json

A transfer (bank mode) is a read-modify-write done the way Hudi users do one: `MERGE INTO`
with `amount = t.amount + s.delta`, so the balance it reads is the one in the file slice
its own transaction merges, and OCC (ZooKeeper or file-system lock, from the config's
`hudi_options`) must abort it if another writer committed to that file group meanwhile.
A conflict is retried up to `max_attempts` times. With `open_accounts` the writer first
commits the opening balances, the table's first commit (the stream starts after it).
Every transaction is one JSON line on stdout ({"event": "txn", ...}); the writer stops
when the stop file appears.
"""

from __future__ import annotations

import os
import random
import re
import sys
import time
from typing import Any

from pyspark.sql import SparkSession

try:  # imported as a module of the project (its tests)
    from harness.systems.hudi.script_io import emit, script_main
    from harness.systems.hudi.spark_session import build_session
    from harness.systems.hudi.table_options import ACCOUNTS, LEDGER_COLUMN, table_options
    from harness.systems.hudi.transaction import stopped, transfer
except ImportError:  # run as a script by the Hudi runtime's python: the modules are beside it
    from script_io import emit, script_main  # type: ignore[no-redef]
    from spark_session import build_session  # type: ignore[no-redef]
    from table_options import ACCOUNTS, LEDGER_COLUMN, table_options  # type: ignore[no-redef]
    from transaction import stopped, transfer  # type: ignore[no-redef]

CONFLICT = "HoodieWriteConflictException"
COMPLETED_COMMIT = re.compile(r"^\d+_\d+\.(commit|deltacommit)$")
# ZooKeeper's client logs a stack trace each time a session closes: noise, not evidence.
QUIET_LOGGERS = ["org.apache.zookeeper", "org.apache.hudi.org.apache.curator"]
ROW_SCHEMA = (
    "id long, event_id long, event_time double, account int, amount long, payload binary, "
    f"{LEDGER_COLUMN} string"
)


def quiet(spark: SparkSession) -> None:
    jvm = spark.sparkContext._jvm
    if jvm is None:
        return
    level = jvm.org.apache.logging.log4j.Level.ERROR
    for name in QUIET_LOGGERS:
        jvm.org.apache.logging.log4j.core.config.Configurator.setLevel(name, level)


def open_accounts(spark: SparkSession, cfg: dict[str, Any]) -> None:
    """The opening balances, ids -1 - account (never a transfer leg's id)."""
    balance = int(cfg["opening_balance"])
    rows = [(-1 - a, -1, 0.0, a, balance, b"", ACCOUNTS) for a in range(int(cfg["accounts"]))]
    frame = spark.createDataFrame(rows, ROW_SCHEMA)
    writer = frame.write.format("hudi").options(**table_options(cfg))
    writer.option("hoodie.datasource.write.operation", "upsert").mode("append").save(
        cfg["table_path"]
    )


def transfer_sql(table: str, source: int, target: int, amount: int) -> str:
    legs = " UNION ALL ".join(
        f"SELECT CAST({-1 - account} AS BIGINT) AS id, CAST({delta} AS BIGINT) AS delta, "
        f"'{ACCOUNTS}' AS {LEDGER_COLUMN}"
        for account, delta in ((source, -amount), (target, amount))
    )
    return (
        f"MERGE INTO {table} t USING ({legs}) s ON t.id = s.id "
        "WHEN MATCHED THEN UPDATE SET t.amount = t.amount + s.delta"
    )


def wait_for_table(table_path: str, timeout_s: float) -> None:
    """Until the table has a completed commit (another writer may be opening it)."""
    timeline = os.path.join(table_path, ".hoodie", "timeline")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        names = os.listdir(timeline) if os.path.isdir(timeline) else []
        if any(COMPLETED_COMMIT.match(name) for name in names):
            return
        time.sleep(0.2)
    raise TimeoutError(f"no completed commit in {timeline} after {timeout_s} s")


def run(cfg: dict[str, Any]) -> int:
    extra = {"spark.sql.shuffle.partitions": "1", "spark.sql.warehouse.dir": cfg["warehouse_dir"]}
    spark = build_session(cfg, cfg["writer"], "local[1]", extra)
    quiet(spark)
    emit("session", pid=os.getpid())
    for key, value in table_options(cfg).items():  # what MERGE INTO writes with
        spark.conf.set(key, value)
    if cfg.get("open_accounts"):
        open_accounts(spark, cfg)
        emit("opened", accounts=int(cfg["accounts"]))
    if cfg.get("open_only"):  # a bank stream without batch writers: only the accounts
        spark.stop()
        return 0
    wait_for_table(cfg["table_path"], float(cfg.get("table_timeout_s", 300)))
    spark.sql(f"CREATE TABLE bank USING hudi LOCATION '{cfg['table_path']}'")
    emit("started", pid=os.getpid())
    rng = random.Random(int(cfg["seed"]))

    def execute(source: int, target: int, amount: int) -> None:
        spark.sql(transfer_sql("bank", source, target, amount))

    while not stopped(cfg["stop_file"], float(cfg["every_s"])):
        transfer(execute, lambda error: "conflict" if CONFLICT in error else "error", cfg, rng)
    emit("stopped")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(script_main(sys.argv, run))
