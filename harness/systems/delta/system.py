"""Delta Lake as a Spark sink under test: what the shared runner needs of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.systems.delta.log import DELTA_LOG
from harness.systems.delta.runtime import DEFAULT_VERSION, ensure_runtime
from harness.systems.spark_stream.commit_watch import SeenCommit
from harness.systems.spark_stream.sink_system import SinkSystem

SESSION = {  # what Delta's quick start asks of a session that runs Delta's SQL (MERGE)
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    # Delta rebuilds its snapshot's state after each commit in this many tasks (default
    # 50): on a small machine that is most of a micro-batch. Sized like the session's
    # shuffle partitions (stream_driver.py), as Delta's docs advise for small tables.
    "spark.databricks.delta.snapshotPartitions": "2",
}


def change_feed(root: Path, after: SeenCommit, upto: SeenCommit) -> dict[str, Any]:
    """Delta's incremental read: its change data feed of versions after..upto, the rows
    each made visible (an update's new image, not its old one)."""
    options = {
        "readChangeFeed": "true",
        "startingVersion": str(after.version + 1),
        "endingVersion": str(upto.version),
    }
    where = "_change_type IN ('insert', 'update_postimage')"
    return {"options": options, "path": str(Path(root) / "table"), "where": where}


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
    incremental=change_feed,
    # The change data feed is written from the table's creation on, for incremental reads.
    table_properties={"delta.enableChangeDataFeed": "true"},
)
