"""Iceberg's commit log: its metadata versions. On a hadoop catalog's table each is
`metadata/v<N>.metadata.json`, made by the rename that is the commit; on a JDBC catalog's
`metadata/<NNNNN>-<uuid>.metadata.json`, committed once the catalog's pointer names it
(catalog.py).

What the watch keeps of a metadata version: its current snapshot (id, parent, sequence
number), the batch that snapshot's summary records for the stream
(`spark.sql.streaming.epochId`, beside its query id), and the data files the snapshot
added and deleted, read from the manifests it wrote (Avro, through fastavro). Version 1
(the table's creation) has no snapshot.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import fastavro

from harness.systems.iceberg.catalog import committed_metadata
from harness.systems.spark_stream.checkpoint_truth import local_path
from harness.systems.spark_stream.commit_watch import CommitLog, SeenCommit

EPOCH_KEY = "spark.sql.streaming.epochId"
ADDED, DELETED = 1, 2  # a manifest entry's status


def _avro(uri: str) -> list[dict[str, Any]]:
    with open(local_path(uri), "rb") as handle:
        return [r for r in fastavro.reader(handle) if isinstance(r, dict)]


def snapshot_files(snapshot: dict[str, Any], location: str) -> tuple[list[str], list[str]]:
    """(added, deleted) data files of one snapshot, relative to the table's location."""
    added: list[str] = []
    deleted: list[str] = []
    prefix = local_path(location).as_posix().rstrip("/") + "/"
    for manifest in _avro(snapshot["manifest-list"]):
        if manifest.get("added_snapshot_id") != snapshot["snapshot-id"]:
            continue
        for entry in _avro(manifest["manifest_path"]):
            path = local_path(entry["data_file"]["file_path"]).as_posix().removeprefix(prefix)
            if entry["status"] == ADDED:
                added.append(path)
            elif entry["status"] == DELETED:
                deleted.append(path)
    return added, deleted


def read_metadata(path: Path, version: int) -> SeenCommit:
    """A metadata version's current snapshot; ValueError (JSON) if it is not one."""
    metadata = json.loads(path.read_text(encoding="utf-8"))
    current = metadata.get("current-snapshot-id")
    snapshots = {s["snapshot-id"]: s for s in metadata.get("snapshots", [])}
    snapshot = snapshots.get(current) if current not in (None, -1) else None
    if snapshot is None:
        return SeenCommit(0.0, 0, version)
    epoch = snapshot.get("summary", {}).get(EPOCH_KEY)
    added, deleted = snapshot_files(snapshot, metadata["location"])
    return SeenCommit(
        0.0,
        0,
        version,
        batch=int(epoch) if epoch is not None else None,
        added=tuple(added),
        removed=tuple(deleted),
        sequence=snapshot.get("sequence-number"),
        snapshot=snapshot["snapshot-id"],
        parent=snapshot.get("parent-snapshot-id"),
    )


ICEBERG_LOGS = {
    "hadoop": CommitLog("metadata", re.compile(r"^v(\d+)\.metadata\.json$"), read_metadata, 1),
    "jdbc": CommitLog(
        "metadata",
        re.compile(r"^(\d{5,})-[0-9a-f-]{36}\.metadata\.json$"),
        read_metadata,
        first=0,  # the table's creation
        committed=committed_metadata,
    ),
}
