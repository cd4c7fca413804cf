"""The interface a table format's Spark sink fills to run under the harness: what differs
between Delta and Iceberg (DESIGN.md "Systems under test"), everything else being
Spark's (harness/systems/spark_stream/sink_run.py runs any of them)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
    stream_by_name: bool  # whether the stream writes to the table's name (else its path)
    as_of: Callable[[SeenCommit], str]  # a commit -> what `VERSION AS OF` takes for it
    # (run's root, commit after which, commit up to which) -> the reader's spec of the
    # format's incremental read of what those commits added ({"options", "path" | "table",
    # "where"?}), or None where the format cannot pull from `after`
    incremental: Callable[[Path, SeenCommit, SeenCommit], dict[str, Any] | None]
    # the run's root -> SQL to run before the table is created (a catalog's namespace)
    prepare_sql: Callable[[Path], tuple[str, ...]] = lambda root: ()
    table_properties: Mapping[str, str] = field(default_factory=dict)
    # Java exceptions (simple names) meaning a batch writer's commit lost a race and was not
    # made, unless one of `indeterminate` is among the failure's causes too; anything else
    # a failed commit raises is indeterminate (the commit may have landed).
    conflicts: tuple[str, ...] = ()
    indeterminate: tuple[str, ...] = ()
