"""Apache Iceberg as a Spark sink under test: what the shared runner needs of it.

A Hadoop catalog keeps a table at <warehouse>/<namespace>/<name>: with the run's parent
folder as the warehouse and the run's folder as the namespace, the table is the run's own
`table/` folder, as for every system. Iceberg documents the Hadoop catalog's commit (a
rename of the next metadata version) as safe for one process only: one stream writes.
"""

from __future__ import annotations

from pathlib import Path

from harness.systems.iceberg.metadata_log import ICEBERG_LOG
from harness.systems.iceberg.runtime import DEFAULT_VERSION, ensure_runtime
from harness.systems.spark_stream.sink_system import SinkSystem

CATALOG = "instantbench"


def session(root: Path) -> dict[str, str]:
    return {
        "spark.sql.extensions": (
            "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
        ),
        f"spark.sql.catalog.{CATALOG}": "org.apache.iceberg.spark.SparkCatalog",
        f"spark.sql.catalog.{CATALOG}.type": "hadoop",
        f"spark.sql.catalog.{CATALOG}.warehouse": str(Path(root).parent),
    }


ICEBERG_SINK = SinkSystem(
    kind="iceberg",
    label="Apache Iceberg",
    default_version=DEFAULT_VERSION,
    ensure_runtime=ensure_runtime,
    log=ICEBERG_LOG,
    format="iceberg",
    session=session,
    table_sql=lambda root: f"{CATALOG}.`{Path(root).name}`.`table`",
    txn_confs=False,
    # Spark 4's own time travel: Iceberg takes versionAsOf as a snapshot id (its own
    # `snapshot-id` read option is refused on Spark 4.1).
    as_of=lambda commit: {"versionAsOf": str(commit.snapshot)},
)
