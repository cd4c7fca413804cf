"""Apache Iceberg as a Spark sink under test: what the shared runner needs of it, for the
catalog the scenario names (catalog.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.systems.iceberg import catalog as catalogs
from harness.systems.iceberg.metadata_log import ICEBERG_LOGS
from harness.systems.iceberg.runtime import DEFAULT_VERSION, ensure_runtime
from harness.systems.spark_stream.commit_watch import SeenCommit
from harness.systems.spark_stream.sink_system import SinkSystem

DEFAULT_CATALOG = "hadoop"


def appends_between(root: Path, after: SeenCommit, upto: SeenCommit) -> dict[str, Any] | None:
    """Iceberg's incremental read: the data its append snapshots after..upto added (the
    batch writers' overwrites are not appends, and are skipped); none from the table's
    creation, which has no snapshot to start after."""
    if after.snapshot is None:
        return None
    options = {"start-snapshot-id": str(after.snapshot), "end-snapshot-id": str(upto.snapshot)}
    return {"options": options, "table": catalogs.table_sql(root)}


def iceberg_sink(catalog: str | None) -> SinkSystem:
    kind = catalog or DEFAULT_CATALOG
    return SinkSystem(
        kind="iceberg",
        label="Apache Iceberg",
        default_version=DEFAULT_VERSION,
        ensure_runtime=ensure_runtime,
        log=ICEBERG_LOGS[kind],
        format="iceberg",
        session=lambda root: catalogs.session(kind, root),
        table_sql=catalogs.table_sql,
        txn_confs=False,
        stream_by_name=True,
        # Spark 4's time travel: Iceberg takes VERSION AS OF as a snapshot id.
        as_of=lambda commit: str(commit.snapshot),
        incremental=appends_between,
        prepare_sql=catalogs.namespace_sql if kind == "jdbc" else lambda root: (),
        table_properties=catalogs.TABLE_PROPERTIES,
        # ValidationException: a concurrent commit changed what this one read (OCC);
        # CommitFailedException: the catalog's swap lost, Iceberg's own retries spent.
        # CommitStateUnknownException stays indeterminate: the swap may have happened.
        conflicts=("ValidationException", "CommitFailedException"),
        indeterminate=("CommitStateUnknownException",),
    )
