"""Delta Lake as a Spark sink under test: what the shared runner needs of it."""

from __future__ import annotations

from pathlib import Path

from harness.systems.delta.log import DELTA_LOG
from harness.systems.delta.runtime import DEFAULT_VERSION, ensure_runtime
from harness.systems.spark_stream.sink_system import SinkSystem

SESSION = {  # what Delta's quick start asks of a session that runs Delta's SQL (MERGE)
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    # Delta rebuilds its snapshot's state after each commit in this many tasks (default
    # 50): on a small machine that is most of a micro-batch. Sized like the session's
    # shuffle partitions (stream_driver.py), as Delta's docs advise for small tables.
    "spark.databricks.delta.snapshotPartitions": "2",
}

DELTA_SINK = SinkSystem(
    kind="delta",
    label="Delta Lake",
    default_version=DEFAULT_VERSION,
    ensure_runtime=ensure_runtime,
    log=DELTA_LOG,
    format="delta",
    session=lambda root: SESSION,
    table_sql=lambda root: f"delta.`{Path(root) / 'table'}`",  # a path-based table
    txn_confs=True,
    stream_by_name=False,  # a path-based table
    as_of=lambda commit: str(commit.version),
)
