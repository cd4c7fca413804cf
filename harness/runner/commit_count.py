"""The stream's commits so far, counted as they happen from the drivers' history files
(one `commit` event per completed instant, written by the coordinator: durable, and
summed across restarted drivers, each a file of its own). Read incrementally: each
refresh reads only what the files gained, and only whole lines."""

from __future__ import annotations

import json
from pathlib import Path

from harness.history_events import Kind

DRIVER_EVENTS = "events-driver-*.jsonl"  # HistoryWriter's files of src "driver"


class CommitCount:
    def __init__(self, history_dir: Path) -> None:
        self.history_dir = history_dir
        self.count = 0
        self._read: dict[Path, int] = {}  # bytes of whole lines counted, per file

    def refresh(self) -> int:
        for path in sorted(self.history_dir.glob(DRIVER_EVENTS)):
            start = self._read.get(path, 0)
            with open(path, "rb") as handle:
                handle.seek(start)
                chunk = handle.read()
            whole = chunk[: chunk.rfind(b"\n") + 1]  # a line being written waits
            self._read[path] = start + len(whole)
            self.count += sum(_is_commit(line) for line in whole.splitlines())
        return self.count


def _is_commit(line: bytes) -> bool:
    try:
        return bool(json.loads(line).get("kind") == Kind.COMMIT)
    except (json.JSONDecodeError, AttributeError):
        return False
