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

from harness.history_events import EVENTS

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


class HistoryError(ValueError):
    """The history has lines that cannot be read: checks that need its events are unknown."""

    def __init__(self, problems: list[str]) -> None:
        shown = "; ".join(problems[:3]) + ("; ..." if len(problems) > 3 else "")
        super().__init__(f"{len(problems)} unreadable history line(s): {shown}")
        self.problems = problems


# Keys the checkers index for these kinds: an event without them is unreadable evidence.
REQUIRED: dict[str, tuple[str, ...]] = {k: e.required for k, e in EVENTS.items() if e.required}


def _problem(event: Any) -> str | None:
    """What makes a decoded line unusable as an event, or None."""
    if not isinstance(event, dict):
        return f"not a JSON object but {type(event).__name__}"
    t, kind = event.get("t"), event.get("kind")
    if isinstance(t, bool) or not isinstance(t, int | float):
        return f"`t` is {t!r}, not a number"
    if not isinstance(kind, str):
        return f"`kind` is {kind!r}, not a string"
    missing = [k for k in REQUIRED.get(kind, ()) if k not in event]
    return f"{kind} event without {missing}" if missing else None


def _read_file(path: Path, events: list[dict[str, Any]], problems: list[str]) -> None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{path.name}: unreadable ({type(exc).__name__}: {exc})")
        return
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        if not line:
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError as exc:
            # Lines are written whole with their newline, so only a last line without one
            # can be torn (the process was killed mid-write); anything else is corruption.
            torn = number == len(lines) and line.startswith("{")
            if not torn:
                problems.append(f"{path.name}:{number}: not JSON ({exc.msg})")
            continue
        problem = _problem(event)
        if problem:
            problems.append(f"{path.name}:{number}: {problem}")
        else:
            events.append(event)


def load_events(history_dir: str | os.PathLike) -> tuple[list[dict[str, Any]], list[str]]:
    """All readable events of a run, oldest first, and the problems of the rest (`file:line:
    what`). A torn last line of a file (a killed process) is no problem."""
    events: list[dict[str, Any]] = []
    problems: list[str] = []
    for path in sorted(Path(history_dir).glob(EVENTS_GLOB)):
        _read_file(path, events, problems)
    events.sort(key=lambda e: e["t"])
    return events, problems


def read_events(history_dir: str | os.PathLike) -> list[dict[str, Any]]:
    """All events of a run, oldest first; HistoryError if any line cannot be read."""
    events, problems = load_events(history_dir)
    if problems:
        raise HistoryError(problems)
    return events


def append_series(history_dir: str | os.PathLike, sample: dict[str, Any]) -> None:
    with open(Path(history_dir) / SERIES_FILE, "a", encoding="utf-8") as f:
        f.write(json.dumps(sample) + "\n")


def read_series(history_dir: str | os.PathLike) -> list[dict[str, Any]]:
    path = Path(history_dir) / SERIES_FILE
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
