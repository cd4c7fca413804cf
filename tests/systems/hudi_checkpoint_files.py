"""Spark 3.5 file-source checkpoint locations, written by hand in Spark's own format
(checked against tests/systems/data/spark35_file_source_checkpoint, which a real pyspark
3.5.9 query wrote with compactInterval 3): `offsets/N` is "v1", a metadata JSON line and
{"logOffset":K}; `commits/N` is "v1" and a JSON line; `sources/0/K` (or `K.compact`) is
"v1" then one {"path","timestamp","batchId"} line per file; no trailing newline; hidden
`.N.crc` files beside each."""

from __future__ import annotations

import json
from pathlib import Path

OFFSET_META = {"batchWatermarkMs": 0, "batchTimestampMs": 1795895037762, "conf": {}}


def _write(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(["v1", *lines]))
    (path.parent / f".{path.name}.crc").write_bytes(b"crc\x00\x01")


def file_entry(uri: str, log_offset: int) -> str:
    return json.dumps({"path": uri, "timestamp": 1795895037425, "batchId": log_offset})


def write_checkpoint(
    root: Path,
    source_log: dict[int, list[str]],
    ends: dict[int, int],
    commits: list[int],
    compact: dict[int, list[int]] | None = None,
) -> Path:
    """source_log: log offset -> file URIs; ends: batch -> logOffset; compact: a compacted
    log id -> the log offsets it holds (their plain files are then not written)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "metadata").write_text('{"id":"9f1c2e7a-0b7d-4f55-8a43-1f4e1c2b9d10"}')
    compacted = {k for held in (compact or {}).values() for k in held}
    for log_id, held in (compact or {}).items():
        lines = [file_entry(uri, k) for k in held for uri in source_log.get(k, [])]
        _write(root / "sources" / "0" / f"{log_id}.compact", lines)
    for k, uris in source_log.items():
        if k not in compacted:
            _write(root / "sources" / "0" / str(k), [file_entry(uri, k) for uri in uris])
    for batch, end in ends.items():
        lines = [json.dumps(OFFSET_META), json.dumps({"logOffset": end})]
        _write(root / "offsets" / str(batch), lines)
    for batch in commits:
        _write(root / "commits" / str(batch), [json.dumps({"nextBatchWatermarkMs": 0})])
    return root
