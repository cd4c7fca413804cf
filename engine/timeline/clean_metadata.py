"""A completed clean as Apache Hudi 1.x records it: one `HoodieCleanMetadata` Avro record.

Hudi's readers read the last completed clean's `earliestCommitToRetain` before a time
travel (TimelineUtils.validateTimestampAsOf) and refuse one when the file is not that
record. So a completed clean holds Hudi's fields (hudi-common/src/main/avro/
HoodieCleanMetadata.avsc and HoodieCleanPartitionMetadata.avsc, version 2: file names,
not paths) and, in one field Hudi's schema does not have, the engine's own fields as
`extraMetadata` (each value JSON text, as in a commit's record): Avro's schema resolution
skips a writer's field the reader does not know, and the engine reads it back.
"""

from __future__ import annotations

from typing import Any

from engine.timeline.avro import ContainerCodec, optional_field

PLAN_KEY = "clean"  # the engine's clean plan: {retain_commits, earliest_retained, ..., files}
POLICY = "KEEP_LATEST_COMMITS"
VERSION = 2  # Hudi's CleanerUtils.CLEAN_METADATA_VERSION_2: file names, no migration
PARTITION = ""  # non-partitioned

_PARTITION_METADATA = {
    "type": "record",
    "name": "HoodieCleanPartitionMetadata",
    "fields": [
        {"name": "partitionPath", "type": "string"},
        {"name": "policy", "type": "string"},
        {"name": "deletePathPatterns", "type": {"type": "array", "items": "string"}},
        {"name": "successDeleteFiles", "type": {"type": "array", "items": "string"}},
        {"name": "failedDeleteFiles", "type": {"type": "array", "items": "string"}},
        optional_field("isPartitionDeleted", "boolean"),
    ],
}
HOODIE_CLEAN_METADATA = {
    "namespace": "org.apache.hudi.avro.model",
    "type": "record",
    "name": "HoodieCleanMetadata",
    "fields": [
        {"name": "policy", "type": "string", "default": ""},
        {"name": "startCleanTime", "type": "string"},
        {"name": "timeTakenInMillis", "type": "long"},
        {"name": "totalFilesDeleted", "type": "int"},
        {"name": "earliestCommitToRetain", "type": "string"},
        {"name": "lastCompletedCommitTimestamp", "type": "string", "default": ""},
        {"name": "partitionMetadata", "type": {"type": "map", "values": _PARTITION_METADATA}},
        {"name": "version", "type": ["int", "null"], "default": 1},
        # Not Hudi's: the engine's fields (bootstrapPartitionMetadata, Hudi's last field,
        # is left to its default, null).
        optional_field("extraMetadata", {"type": "map", "values": "string"}),
    ],
}
CODEC = ContainerCodec(HOODIE_CLEAN_METADATA)


def clean_record(
    instant_time: str, plan: dict[str, Any] | None, extra: dict[str, str]
) -> dict[str, Any]:
    """The record of the clean requested at `instant_time` that ran `plan` (the engine's:
    its `earliest_retained_instant` is the requested time of the oldest commit retained,
    Hudi's earliestCommitToRetain)."""
    plan = plan or {}
    files = list(plan.get("files", []))
    return {
        "policy": POLICY,
        "startCleanTime": instant_time,
        "timeTakenInMillis": 0,
        "totalFilesDeleted": len(files),
        "earliestCommitToRetain": plan.get("earliest_retained_instant") or "",
        "lastCompletedCommitTimestamp": "",
        "partitionMetadata": {
            PARTITION: {
                "partitionPath": PARTITION,
                "policy": POLICY,
                "deletePathPatterns": files,
                "successDeleteFiles": files,
                "failedDeleteFiles": [],
                "isPartitionDeleted": None,
            }
        },
        "version": VERSION,
        "extraMetadata": extra,
    }
