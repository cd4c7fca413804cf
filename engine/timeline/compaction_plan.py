"""A requested compaction as Apache Hudi 1.x records it: one `HoodieCompactionPlan` Avro
record in `<t>.compaction.requested`.

Hudi's file-system view reads every pending compaction's plan to know which file slices
it merges (CompactionUtils.getCompactionPlan); a plan it cannot parse fails the whole view,
so a table with a compaction pending reads nothing. The plan holds Hudi's operations
(hudi-common/src/main/avro/HoodieCompactionOperation.avsc, version 2: file names, not
paths) and the engine's own fields in its `extraMetadata` (each value JSON text, as in a
commit's record), which the engine reads back.
"""

from __future__ import annotations

from typing import Any

from engine.timeline.avro import ContainerCodec, optional_field

VERSION = 2  # Hudi's CompactionUtils.LATEST_COMPACTION_METADATA_VERSION: file names
PARTITION = ""  # non-partitioned


_OPERATION = {
    "name": "HoodieCompactionOperation",
    "type": "record",
    "fields": [
        optional_field("baseInstantTime", "string"),
        optional_field("deltaFilePaths", {"type": "array", "items": "string"}),
        optional_field("dataFilePath", "string"),
        optional_field("fileId", "string"),
        optional_field("partitionPath", "string"),
        optional_field("metrics", {"type": "map", "values": "double"}),
        optional_field("externalDataFilePath", "string"),
    ],
}
HOODIE_COMPACTION_PLAN = {
    "namespace": "org.apache.hudi.avro.model",
    "type": "record",
    "name": "HoodieCompactionPlan",
    "fields": [
        optional_field("operations", {"type": "array", "items": _OPERATION}),
        optional_field("extraMetadata", {"type": "map", "values": "string"}),
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}
CODEC = ContainerCodec(HOODIE_COMPACTION_PLAN)


def compaction_plan_record(plan: list[dict[str, Any]], extra: dict[str, str]) -> dict[str, Any]:
    """The record of the engine's plan ([{file_id, base, logs}]): one operation per file
    group, its slice's base instant time that of the base file, or for a slice of logs
    only that of its first log."""
    from engine.layout.file_names import parse_data_file  # the layout imports the timeline

    operations = []
    for entry in plan:
        base, logs = entry.get("base"), list(entry.get("logs", []))
        first = parse_data_file(base or logs[0]) if (base or logs) else None
        operations.append(
            {
                "baseInstantTime": first.instant if first is not None else None,
                "deltaFilePaths": logs,
                "dataFilePath": base,
                "fileId": entry["file_id"],
                "partitionPath": PARTITION,
                "metrics": None,
                "externalDataFilePath": None,
            }
        )
    return {"operations": operations, "extraMetadata": extra, "version": VERSION}
