"""Iceberg's catalogs as the harness runs them, each keeping the run's table at
<run>/table: the run's parent folder is the warehouse, the run's folder the namespace and
`table` the table's name.

- hadoop (the default): the commit is the rename that makes metadata/v<N+1>.metadata.json;
  Iceberg guards its check-then-rename inside one JVM only, so one process writes.
- jdbc: a SQLite file, <run>/catalog.db. The commit is one SQL UPDATE that swaps the
  table's metadata_location from the version the writer read to the one it wrote (a
  compare-and-swap), so writers in several processes serialise. A metadata file whose
  writer lost the swap is no commit: the committed versions are the current pointer's
  file and the files its metadata-log names, read here from the catalog's own row.
"""

from __future__ import annotations

import contextlib
import functools
import json
import sqlite3
from pathlib import Path

from harness.systems.spark_stream.checkpoint_truth import local_path

CATALOG = "instantbench"
CATALOG_FILE = "catalog.db"
# Every committed version stays named in the newest metadata's log (Iceberg keeps 100 by
# default and drops the rest), so the chain read from the pointer is never cut short.
TABLE_PROPERTIES = {"write.metadata.previous-versions-max": "1000000"}


def session(catalog: str, root: Path) -> dict[str, str]:
    prefix = f"spark.sql.catalog.{CATALOG}"
    conf = {
        "spark.sql.extensions": "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        prefix: "org.apache.iceberg.spark.SparkCatalog",
        f"{prefix}.type": catalog,
        f"{prefix}.warehouse": str(Path(root).parent),
        # A writer's MERGE must read the table's newest snapshot, not one the session's
        # catalog cached (for 30 s by default) before another process committed.
        f"{prefix}.cache-enabled": "false",
    }
    if catalog == "jdbc":
        conf[f"{prefix}.uri"] = f"jdbc:sqlite:{Path(root) / CATALOG_FILE}"
        # SQLite lets one process write at a time: the others wait for it, not fail.
        conf[f"{prefix}.jdbc.busy_timeout"] = "30000"
    return conf


def table_sql(root: Path) -> str:
    return f"{CATALOG}.`{Path(root).name}`.`table`"


def namespace_sql(root: Path) -> tuple[str, ...]:
    """What must exist before the table: the JDBC catalog keeps namespaces as rows."""
    return (f"CREATE NAMESPACE IF NOT EXISTS {CATALOG}.`{Path(root).name}`",)


def current_metadata(table: Path) -> str | None:
    """The metadata file the JDBC catalog's row points at (None before the table exists)."""
    db = table.parent / CATALOG_FILE
    if not db.is_file():
        return None
    # closing(): a connection's own `with` ends a transaction, not the connection.
    with contextlib.closing(
        sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    ) as connection:
        try:
            row = connection.execute(
                "SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? "
                "AND table_namespace = ? AND table_name = ?",
                (CATALOG, table.parent.name, table.name),
            ).fetchone()
        except sqlite3.OperationalError as exc:
            if "no such table" in str(exc):  # the catalog is being made
                return None
            raise
    return None if row is None or row[0] is None else str(row[0])


@functools.lru_cache(maxsize=8)
def _chain(location: str) -> tuple[Path, ...]:
    metadata = json.loads(local_path(location).read_text(encoding="utf-8"))
    earlier = [local_path(e["metadata-file"]) for e in metadata.get("metadata-log", [])]
    return (*earlier, local_path(location))


def committed_metadata(table: Path) -> list[Path]:
    """The JDBC catalog's committed metadata files, oldest first."""
    location = current_metadata(table)
    return [] if location is None else list(_chain(location))
