"""Fake Spark checkpoint locations, written in Spark's own format (checked against a real
one: `offsets/N` and `commits/N` are "v1", a metadata JSON line, then for offsets the
source's offset JSON, with no trailing newline; hidden `.N.crc` files sit beside them)."""

from __future__ import annotations

import json
from pathlib import Path

OFFSET_META = {"batchWatermarkMs": 0, "batchTimestampMs": 1795380400056, "conf": {}}
COMMIT_META = {"nextBatchWatermarkMs": 0}


def write_checkpoint(root: Path, ends: dict[int, int], commits: set[int] | list[int]) -> Path:
    """offsets/N for each N in `ends` (the source's end offset), commits/N for `commits`."""
    for log in ("offsets", "commits"):
        (root / log).mkdir(parents=True, exist_ok=True)
    (root / "metadata").write_text('{"id":"5e59dfa3-2e14-4c87-8dcd-98cb49d379d3"}')
    for n, end in ends.items():
        source = json.dumps({"offset": end, "t": 1795380400.0 + n})
        (root / "offsets" / str(n)).write_text(f"v1\n{json.dumps(OFFSET_META)}\n{source}")
        (root / "offsets" / f".{n}.crc").write_bytes(b"crc\x00\x01")
    for n in commits:
        (root / "commits" / str(n)).write_text(f"v1\n{json.dumps(COMMIT_META)}")
        (root / "commits" / f".{n}.crc").write_bytes(b"crc\x00\x01")
    return root


def chained(*ends: int) -> dict[int, int]:
    """Batch ids 0.. with these end offsets."""
    return dict(enumerate(ends))
