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

from engine.timeline.avro import ContainerCodec

VERSION = 2  # Hudi's CompactionUtils.LATEST_COMPACTION_METADATA_VERSION: file names
PARTITION = ""  # non-partitioned


def _opt(name: str, avro_type: Any) -> dict[str, Any]:
    return {"name": name, "type": ["null", avro_type], "default": None}


_OPERATION = {
    "name": "HoodieCompactionOperation",
    "type": "record",
    "fields": [
        _opt("baseInstantTime", "string"),
        _opt("deltaFilePaths", {"type": "array", "items": "string"}),
        _opt("dataFilePath", "string"),
        _opt("fileId", "string"),
        _opt("partitionPath", "string"),
        _opt("metrics", {"type": "map", "values": "double"}),
        _opt("externalDataFilePath", "string"),
    ],
}
HOODIE_COMPACTION_PLAN = {
    "namespace": "org.apache.hudi.avro.model",
    "type": "record",
    "name": "HoodieCompactionPlan",
    "fields": [
        _opt("operations", {"type": "array", "items": _OPERATION}),
        _opt("extraMetadata", {"type": "map", "values": "string"}),
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
