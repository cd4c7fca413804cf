"""Reading Spark's checkpoint location: which micro-batches are durably recorded."""

from __future__ import annotations

import json
from pathlib import Path


def committed_batches(checkpoint_dir: str | Path) -> list[int]:
    """Batch ids whose commit log entry exists (Spark recorded them durably), ascending."""
    commits = Path(checkpoint_dir) / "commits"
    if not commits.is_dir():
        return []
    return sorted(int(p.name) for p in commits.iterdir() if p.name.isdigit())


def last_committed_batch(checkpoint_dir: str | Path) -> int | None:
    batches = committed_batches(checkpoint_dir)
    return batches[-1] if batches else None


def batch_source_offset(checkpoint_dir: str | Path, batch_id: int) -> dict | None:
    """The source's end offset for a batch, from Spark's offset log (its last line)."""
    path = Path(checkpoint_dir) / "offsets" / str(batch_id)
    if not path.exists():
        return None
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    return json.loads(lines[-1]) if len(lines) >= 3 else None
