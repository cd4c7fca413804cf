"""The interface a table format's Spark sink fills to run under the harness: what differs
between Delta and Iceberg (DESIGN.md "Systems under test"), everything else being
Spark's (harness/systems/spark_stream/sink_run.py runs any of them)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.systems.spark_stream.commit_watch import CommitLog, SeenCommit
from harness.systems.spark_stream.runtime_cache import SparkRuntime


@dataclass(frozen=True)
class SinkSystem:
    kind: str  # the scenario's system.kind
    label: str  # how reports and errors name it
    default_version: str
    ensure_runtime: Callable[[str], SparkRuntime]  # version -> its runtime (jars fetched)
    log: CommitLog  # its commit log, for the watch, the seam and the timeline check
    format: str  # its Spark data source
    session: Callable[[Path], Mapping[str, str]]  # the run's root -> its session settings
    table_sql: Callable[[Path], str]  # the run's root -> the table's name in SQL
    txn_confs: bool  # whether foreachBatch writes take Delta's txnAppId/txnVersion
    as_of: Callable[[SeenCommit], dict[str, str]]  # the reader's options for a time travel
