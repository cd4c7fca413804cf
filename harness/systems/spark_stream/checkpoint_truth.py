"""Which landed files Spark durably recorded as committed: the exactly-once ground truth.

It comes from Spark's checkpoint location, not from the driver's word (DESIGN.md,
evidence rules). With the file source, the location holds:
- `offsets/N`: "v1", a metadata JSON line, then the source's offset {"logOffset": K}.
  Spark writes it before batch N runs.
- `commits/N`: written once batch N is complete, after the sink's addBatch returned.
- `sources/0/K`: "v1", then one JSON line per file the source admitted under log offset K
  ({"path": URI, "timestamp": ms, "batchId": K}). Every `compactInterval` (default 10)
  entries Spark writes `K.compact` instead, holding the entries of every offset up to K,
  and may delete the older files.
Batch N reads the source log entries with K_{N-1} < batchId <= K_N. Spark writes a batch's
commit only after every earlier one, so the committed files are those with
batchId <= K of the last committed batch. Files are written by rename; hidden `.N.crc`
files and temporaries beside them are not entries.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq

from harness.pipeline.checkpoints import committed_batches, planned_batches
from harness.systems.spark_stream.landing import parse_name


@dataclass
class CheckpointTruth:
    """What the checkpoint location says. `problems` non-empty means the evidence is
    partial or contradictory: a check built on it is `unknown`, never `valid`."""

    committed_batches: list[int] = field(default_factory=list)
    batch_files: dict[int, list[str]] = field(default_factory=dict)  # committed, by batch
    pending_batches: dict[int, list[str]] = field(default_factory=dict)  # planned, no commit
    problems: list[str] = field(default_factory=list)

    def committed_files(self) -> list[str]:
        return [path for batch in self.committed_batches for path in self.batch_files[batch]]

    @property
    def last_committed(self) -> int | None:
        return self.committed_batches[-1] if self.committed_batches else None


def _json_lines(path: Path) -> list[dict]:
    """The JSON lines after the version line; ValueError naming the file if it is not one."""
    lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not lines or not lines[0].startswith("v"):
        raise ValueError(f"{path}: no version line")
    try:
        return [json.loads(line) for line in lines[1:]]
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON lines ({exc})") from exc


def log_offset(checkpoint: Path, batch: int) -> int:
    """K_N, the file source's log offset that batch N read up to (its offset entry)."""
    path = checkpoint / "offsets" / str(batch)
    records = _json_lines(path)
    if len(records) < 2 or "logOffset" not in records[-1]:
        raise ValueError(f"{path}: no file source offset (logOffset) line")
    return int(records[-1]["logOffset"])


def source_entries(checkpoint: Path, source: int = 0) -> dict[int, list[str]]:
    """Source log offset -> paths of the files admitted under it, from plain and compacted
    log files alike (a path listed in both is counted once)."""
    folder = checkpoint / "sources" / str(source)
    by_offset: dict[int, list[str]] = {}
    seen: set[str] = set()
    if not folder.is_dir():
        return by_offset
    names = [p.name for p in folder.iterdir() if not p.name.startswith(".")]
    ids = sorted(int(n.split(".")[0]) for n in names if n.split(".")[0].isdigit())
    for log_id in ids:
        for name in (f"{log_id}.compact", str(log_id)):
            if name not in names:
                continue
            for record in _json_lines(folder / name):
                path = str(record["path"])
                if path not in seen:
                    seen.add(path)
                    by_offset.setdefault(int(record["batchId"]), []).append(path)
    return by_offset


def read_truth(checkpoint_dir: str | Path) -> CheckpointTruth:
    """Committed batches and their files, plus the batch that was planned but not committed."""
    checkpoint = Path(checkpoint_dir)
    truth = CheckpointTruth()
    try:
        entries = source_entries(checkpoint)
        planned = planned_batches(checkpoint)
        committed = set(committed_batches(checkpoint))
        ends = {batch: log_offset(checkpoint, batch) for batch in planned}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        truth.problems.append(f"unreadable checkpoint: {exc}")
        return truth
    if missing := sorted(committed - set(planned)):
        truth.problems.append(f"commits without an offset entry: batches {missing}")
    previous_end = -1
    for batch in planned:
        end = ends[batch]
        files = [p for k in range(previous_end + 1, end + 1) for p in entries.get(k, [])]
        if end > previous_end and not any(k in entries for k in range(previous_end + 1, end + 1)):
            truth.problems.append(f"batch {batch}: no source log entry for offsets up to {end}")
        if batch in committed:
            truth.committed_batches.append(batch)
            truth.batch_files[batch] = files
        else:
            truth.pending_batches[batch] = files
        previous_end = max(previous_end, end)
    first_pending = min(truth.pending_batches, default=None)
    gaps = [b for b in truth.committed_batches if first_pending is not None and b > first_pending]
    if gaps:
        truth.problems.append(f"batches committed after an uncommitted one: {gaps}")
    return truth


def local_path(uri: str) -> Path:
    """The local file a source log path names (Spark writes file: URIs, percent-encoded)."""
    parsed = urlparse(uri)
    return Path(unquote(parsed.path)) if parsed.scheme in ("file", "") else Path(uri)


def committed_event_ids(truth: CheckpointTruth, batch: int | None = None) -> np.ndarray:
    """The event ids of every row of every committed batch (or of committed `batch` alone),
    read from the landed files."""
    uris = truth.committed_files() if batch is None else truth.batch_files.get(batch, [])
    arrays = [
        pq.read_table(local_path(uri), columns=["event_id"]).column("event_id").to_numpy()
        for uri in uris
    ]
    return np.concatenate(arrays) if arrays else np.zeros(0, np.int64)


def committed_offsets(truth: CheckpointTruth) -> list[tuple[int, int, int]]:
    """(partition, start, end) source offset ranges of the committed files, from their names
    (the landing names carry them); a file whose name does not parse is left out."""
    ranges = []
    for uri in truth.committed_files():
        landed = parse_name(local_path(uri).name)
        if landed is not None:
            ranges.append((landed.partition, landed.start, landed.end))
    return sorted(ranges)


def batch_rows(truth: CheckpointTruth, batch: int) -> tuple[int, float | None]:
    """(rows, newest event time) of the landed files a batch read."""
    uris = truth.batch_files.get(batch) or truth.pending_batches.get(batch) or []
    rows, newest = 0, None
    for uri in uris:
        times = pq.read_table(local_path(uri), columns=["event_time"]).column("event_time")
        rows += len(times)
        top = pc.max(times).as_py()
        newest = top if newest is None or (top is not None and top > newest) else newest
    return rows, newest
