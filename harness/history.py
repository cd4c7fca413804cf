"""The run history (docs/history.md): append-only JSON lines, one file per process.

Each process appends to its own file so that writers on executors, the driver and the
runner never interleave partial lines; readers merge all files and sort by time.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

EVENTS_GLOB = "events-*.jsonl"
SERIES_FILE = "series.jsonl"


class HistoryWriter:
    """Thread-safe event recorder for one process; usable as the engine's `recorder`."""

    def __init__(self, history_dir: str | os.PathLike, src: str) -> None:
        self.dir = Path(history_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.src = src
        self._path = self.dir / f"events-{src.replace(':', '_')}-{os.getpid()}.jsonl"
        self._lock = threading.Lock()

    def __call__(self, kind: str, fields: dict[str, Any] | None = None) -> None:
        self.record(kind, **(fields or {}))

    def record(self, kind: str, **fields: Any) -> None:
        event = {"t": fields.pop("t", None) or time.time(), "kind": kind, "src": self.src}
        event.update(fields)
        line = json.dumps(event, default=str) + "\n"
        with self._lock, open(self._path, "a", encoding="utf-8") as f:
            f.write(line)


def read_events(history_dir: str | os.PathLike) -> list[dict[str, Any]]:
    """All events of a run, oldest first. A torn last line (a killed process) is skipped."""
    events: list[dict[str, Any]] = []
    for path in sorted(Path(history_dir).glob(EVENTS_GLOB)):
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                events.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    events.sort(key=lambda e: e["t"])
    return events


def append_series(history_dir: str | os.PathLike, sample: dict[str, Any]) -> None:
    with open(Path(history_dir) / SERIES_FILE, "a", encoding="utf-8") as f:
        f.write(json.dumps(sample) + "\n")


def read_series(history_dir: str | os.PathLike) -> list[dict[str, Any]]:
    path = Path(history_dir) / SERIES_FILE
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
