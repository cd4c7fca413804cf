"""Reading Spark's checkpoint location: which micro-batches are durably recorded.

Spark writes `offsets/N` before batch N runs (the source's end offset for it) and
`commits/N` once the batch is complete. Each file is lines: a version ("v1"), a metadata
JSON, then (offsets only) one line per source; ours is {"offset": rows, "t": ...}. Batch
N covers the offsets from where batch N-1 ended (0, the source's initial offset, for
batch 0) to its own end. Spark writes the files atomically (rename), and hidden `.N.crc`
and temporary files beside them are not log entries.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Listed ids are capped in problem messages: enough to find the entries, small enough to read.
MAX_IDS_LISTED = 20


def _log_ids(checkpoint_dir: str | Path, log: str) -> list[int]:
    folder = Path(checkpoint_dir) / log
    if not folder.is_dir():
        return []
    return sorted(int(p.name) for p in folder.iterdir() if p.name.isdigit())


def committed_batches(checkpoint_dir: str | Path) -> list[int]:
    """Batch ids whose commit log entry exists (Spark recorded them durably), ascending."""
    return _log_ids(checkpoint_dir, "commits")


def planned_batches(checkpoint_dir: str | Path) -> list[int]:
    """Batch ids whose offset log entry exists (Spark planned them), ascending."""
    return _log_ids(checkpoint_dir, "offsets")


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


def last_logged_offset(checkpoint_dir: str | Path) -> dict | None:
    """The newest end offset in Spark's offset log: where a restarted query plans its next
    batch from (None before the first batch was planned)."""
    planned = planned_batches(checkpoint_dir)
    return batch_source_offset(checkpoint_dir, planned[-1]) if planned else None


def _end_offset(checkpoint_dir: Path, batch_id: int) -> int:
    """The end offset of an offset log entry; ValueError naming the file if it is not one."""
    path = checkpoint_dir / "offsets" / str(batch_id)
    try:
        offset = batch_source_offset(checkpoint_dir, batch_id)
        if offset is None:
            raise ValueError("fewer than 3 lines (version, metadata, source offset)")
        return int(offset["offset"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"{path}: not a source offset entry ({exc})") from exc


def _ids_text(ids: list[int]) -> str:
    shown = ", ".join(str(i) for i in ids[:MAX_IDS_LISTED])
    return shown + (f" and {len(ids) - MAX_IDS_LISTED} more" if len(ids) > MAX_IDS_LISTED else "")


@dataclass(frozen=True)
class LoggedBatch:
    """One range of the offset log. `first_id` < `batch_id` when the entries of the batches
    before `batch_id` are missing: their rows are then folded into this range (a batch is
    only recorded after every earlier one, so they share its fate)."""

    batch_id: int
    first_id: int
    start_offset: int  # raw source offsets (rows)
    end_offset: int
    committed: bool


@dataclass
class CheckpointRecord:
    """What the checkpoint location says, and what in it does not add up.

    `gaps`: entries missing or unreadable; the ranges around them are merged, so rows of a
    committed range are still provably expected. `conflicts`: entries that contradict each
    other (offsets going backwards, a commit with no offsets); ranges cannot be trusted."""

    path: str
    batches: list[LoggedBatch] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)

    def committed_ids(self) -> set[int]:
        """Every batch id Spark committed, those folded into a later range included."""
        return {n for b in self.batches if b.committed for n in range(b.first_id, b.batch_id + 1)}

    def summary(self) -> dict[str, Any]:
        return {
            "committed_batches": sum(b.committed for b in self.batches),
            "uncommitted_batches": sum(not b.committed for b in self.batches),
            "gaps": self.gaps,
            "conflicts": self.conflicts,
        }


def read_checkpoint(checkpoint_dir: str | Path) -> CheckpointRecord:
    """The batches of Spark's offset and commit logs, ranges chained from offset 0."""
    root = Path(checkpoint_dir)
    record = CheckpointRecord(path=str(root))
    offsets, commits = _log_ids(root, "offsets"), set(_log_ids(root, "commits"))
    if not offsets:
        record.conflicts.append(f"{root}: Spark's offset log is missing or empty")
        return record
    beyond = sorted(c for c in commits if c > offsets[-1])
    if beyond:
        record.conflicts.append(f"commit log entries without offsets: batches {_ids_text(beyond)}")
    last_commit = max(commits, default=-1)
    # Spark runs one batch at a time: only the newest may be logged without its commit.
    missing_commits = [n for n in offsets if n < last_commit and n not in commits]
    if missing_commits:
        record.gaps.append(
            f"commit log entries missing for batches {_ids_text(missing_commits)} "
            f"(later batches are committed, so these were too)"
        )
    open_batches = [n for n in offsets if n > last_commit]
    if len(open_batches) > 1:
        record.conflicts.append(
            f"offsets logged for batches {_ids_text(open_batches)} after the last commit "
            f"({last_commit}): Spark plans one batch only after committing the one before"
        )
    logged = set(offsets)
    missing = [n for n in range(offsets[-1] + 1) if n not in logged]
    if missing:
        record.gaps.append(
            f"offset log entries missing for batches {_ids_text(missing)} "
            f"(their rows are folded into the next logged batch)"
        )
    start, first = 0, 0
    for n in offsets:
        try:
            end = _end_offset(root, n)
        except ValueError as exc:
            record.gaps.append(f"{exc} (its rows are folded into the next logged batch)")
            continue
        if end < start:
            record.conflicts.append(
                f"offsets go backwards: batch {n} ends at {end}, before its start {start}"
            )
            continue
        committed = n <= last_commit
        record.batches.append(LoggedBatch(n, first, start, end, committed))
        start, first = end, n + 1
    if first <= offsets[-1]:  # the newest entries were unreadable: their range is unknown
        record.conflicts.append(f"no readable end offset for batches from {first} on")
    return record
