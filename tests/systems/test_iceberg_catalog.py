"""Iceberg's catalogs seen from outside (harness/systems/iceberg/catalog.py,
metadata_log.py). JDBC: the commit is the catalog row's pointer, so a metadata file whose
writer lost the swap is no commit, and the watch follows the pointer's chain, never the
folder; hadoop: the folder's v<N> files are the log. On catalog and metadata files written
here, in the layout Iceberg 1.11.0 writes (seen in its runs)."""

import json
import sqlite3
from pathlib import Path

import fastavro

from harness.systems.iceberg.catalog import CATALOG, CATALOG_FILE, committed_metadata
from harness.systems.iceberg.metadata_log import ICEBERG_LOGS
from harness.systems.spark_stream.commit_watch import CommitWatch

SCHEMA = (
    "CREATE TABLE iceberg_tables(catalog_name VARCHAR(255) NOT NULL, table_namespace "
    "VARCHAR(255) NOT NULL, table_name VARCHAR(255) NOT NULL, metadata_location "
    "VARCHAR(1000), previous_metadata_location VARCHAR(1000), iceberg_type VARCHAR(5), "
    "PRIMARY KEY (catalog_name, table_namespace, table_name))"
)


MANIFEST_LIST = {
    "type": "record",
    "name": "manifest_file",
    "fields": [{"name": "added_snapshot_id", "type": "long"}],
}


def _metadata(table: Path, version: int, earlier: list[Path], snapshot: int | None) -> Path:
    folder = table / "metadata"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{version:05d}-{version:08d}-0000-0000-0000-{snapshot or 0:012d}.metadata.json"
    manifests = folder / f"snap-{snapshot}.avro"  # the snapshot's manifest list: empty here
    with open(manifests, "wb") as handle:
        fastavro.writer(handle, MANIFEST_LIST, [])
    snapshots = [{"snapshot-id": snapshot, "manifest-list": str(manifests)}] if snapshot else []
    body = {
        "location": str(table),
        "current-snapshot-id": snapshot if snapshot is not None else -1,
        "snapshots": snapshots,
        "metadata-log": [{"timestamp-ms": 0, "metadata-file": str(p)} for p in earlier],
    }
    path.write_text(json.dumps(body))
    return path


def _point(table: Path, location: Path | None) -> None:
    with sqlite3.connect(table.parent / CATALOG_FILE) as db:
        db.execute(SCHEMA.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS"))
        db.execute("DELETE FROM iceberg_tables")
        if location is not None:
            row = (CATALOG, table.parent.name, table.name, str(location), None, "TABLE")
            db.execute("INSERT INTO iceberg_tables VALUES (?, ?, ?, ?, ?, ?)", row)


def test_only_the_pointer_s_chain_is_committed_not_a_file_that_lost_the_swap(
    tmp_path: Path,
) -> None:
    table = tmp_path / "run" / "table"
    assert committed_metadata(table) == []  # no catalog yet
    created = _metadata(table, 0, [], None)
    _point(table, created)
    assert committed_metadata(table) == [created]
    # Two writers both wrote version 1 from version 0; only one swapped the pointer.
    winner = _metadata(table, 1, [created], 11)
    _metadata(table, 1, [created], 12)  # the loser's file stays on storage
    _point(table, winner)
    assert committed_metadata(table) == [created, winner]

    # The watch sees each committed version once, the loser's never.
    watch = CommitWatch(ICEBERG_LOGS["jdbc"], table, tmp_path / "checkpoint")
    assert [(c.version, c.snapshot) for c in watch.poll()] == [(0, None), (1, 11)]
    later = _metadata(table, 2, [created, winner], 13)
    _point(table, later)
    assert [(c.version, c.snapshot) for c in watch.poll()] == [(2, 13)]
    assert watch.poll() == []


def test_a_catalog_being_made_has_no_commit_yet(tmp_path: Path) -> None:
    table = tmp_path / "run" / "table"
    table.parent.mkdir(parents=True)
    sqlite3.connect(table.parent / CATALOG_FILE).close()  # the file, not yet its tables
    assert committed_metadata(table) == []
    _point(table, None)  # its tables, not yet this table's row
    assert committed_metadata(table) == []


def test_on_the_hadoop_catalog_every_version_file_in_the_folder_is_a_commit(
    tmp_path: Path,
) -> None:
    """Its commit is the rename that makes v<N>.metadata.json: the folder is the log."""
    table = tmp_path / "run" / "table"
    folder = table / "metadata"
    folder.mkdir(parents=True)
    for version, snapshot in ((1, None), (2, 21)):
        written = _metadata(table, version, [], snapshot)
        written.rename(folder / f"v{version}.metadata.json")
    (folder / "version-hint.text").write_text("2")
    log = ICEBERG_LOGS["hadoop"]
    assert [v for v, _ in log.files(table)] == [1, 2] and log.first == 1
    watch = CommitWatch(log, table, tmp_path / "checkpoint")
    assert [(c.version, c.snapshot) for c in watch.poll()] == [(1, None), (2, 21)]
