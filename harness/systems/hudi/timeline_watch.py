"""Hudi's commit log as the runner sees it: timeline files in the order they appeared.

Hudi's instant times are wall-clock readings (yyyyMMddHHmmssSSS), so a skewed clock can
hand out an earlier time after a later one and nothing in the table would show it. The
runner therefore watches the timeline folder on its own monotonic clock, which no clock
fault moves (DESIGN.md "Systems under test", commit log), and records each instant file
the first time it sees it. `judge` then checks that time only ever moved forward.

Where Hudi keeps the files: table version 8 and later (Hudi 1.x) in `.hoodie/timeline/`
as `<requested>.<action>.requested`, `<requested>.<action>.inflight` and
`<requested>_<completed>.<action>`; versions 6 and earlier directly in `.hoodie/`, with
completed instants as `<requested>.<action>` (no completion time) and a COMMIT's inflight
as `<requested>.inflight`. Both folders are watched, so a table of either layout works.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import fastavro

from harness.systems.hudi.timeline_names import parse_instant

SINK_CHECKPOINT_KEY = "_hudi_streaming_sink_checkpoint"
_WIDTH = 32  # instant times are compared as digit strings padded to one width


@dataclass(frozen=True)
class SeenInstant:
    """One timeline file, the first time the watch saw it. Files first seen in the same
    poll share `seen_s` and `poll`: their relative order is not known."""

    seen_s: float  # time.monotonic() of the poll that found it
    poll: int
    name: str
    state: str  # requested | inflight | completed
    action: str  # deltacommit, commit, compaction, clean, rollback, ...
    requested: str
    completed: str | None


def timeline_folders(table_path: str | Path) -> list[Path]:
    hoodie = Path(table_path) / ".hoodie"
    return [hoodie / "timeline", hoodie]


def instant_path(table_path: str | Path, name: str) -> Path | None:
    """Where a timeline file is now (None once archived or rolled back)."""
    for folder in timeline_folders(table_path):
        if (folder / name).is_file():
            return folder / name
    return None


def extra_metadata(path: Path) -> dict[str, str]:
    """A completed instant's extraMetadata: Hudi 1.x (timeline layout 2) writes the commit
    metadata as an Avro container with one HoodieCommitMetadata record."""
    with open(path, "rb") as handle:
        for record in fastavro.reader(handle):
            if isinstance(record, dict):
                return dict(record.get("extraMetadata") or {})
    return {}


def sink_batch(path: Path, identifier: str) -> int | None:
    """The streaming batch id a completed instant records for the sink `identifier`
    (`_hudi_streaming_sink_checkpoint` = {"<identifier>": "<batch id>"}), if any."""
    text = extra_metadata(path).get(SINK_CHECKPOINT_KEY)
    if not text:
        return None
    value = json.loads(text).get(identifier)
    return int(value) if value is not None else None


class TimelineWatch:
    """Polls the table's timeline every `interval_s` on a thread of its own.

    `on_new(entries)` (optional) is called from the watch thread with each poll's new
    entries, as soon as they are seen: a fault that must fire at a timeline event (a kill
    once a commit completed) fires from there, without a second polling loop.
    """

    def __init__(
        self,
        table_path: str | Path,
        interval_s: float = 0.02,
        on_new: Callable[[list[SeenInstant]], None] | None = None,
    ) -> None:
        self.folders = timeline_folders(table_path)
        self.interval_s = interval_s
        self.on_new = on_new
        self._seen: dict[str, SeenInstant] = {}
        self._order: list[SeenInstant] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._polls = 0
        self.error: BaseException | None = None

    def poll(self) -> list[SeenInstant]:
        """One look at the folders; returns (and records) the files not seen before."""
        now = time.monotonic()
        names: set[str] = set()
        for folder in self.folders:
            try:
                names.update(os.listdir(folder))
            except FileNotFoundError:  # the table (or its layout's folder) does not exist yet
                continue
        new = []
        for name in sorted(names - self._seen.keys()):
            parsed = parse_instant(name)
            if parsed is not None:
                new.append(SeenInstant(now, self._polls, name, *parsed))
        with self._lock:
            self._polls += 1
            for entry in new:
                self._seen[entry.name] = entry
            self._order.extend(new)
        return new

    def entries(self) -> list[SeenInstant]:
        with self._lock:
            return list(self._order)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="timeline-watch", daemon=True)
        self._thread.start()

    def stop(self) -> list[SeenInstant]:
        """Stop, after one last poll so that files written just before the stop count."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self.poll()
        return self.entries()

    def _run(self) -> None:
        try:
            while True:
                new = self.poll()
                if new and self.on_new is not None:
                    self.on_new(new)
                if self._stop.wait(self.interval_s):
                    return
        except BaseException as exc:  # kept for the caller: a thread's error is otherwise lost
            self.error = exc


@dataclass(frozen=True)
class Violation:
    """A time that did not exceed every time seen in an earlier poll."""

    index: int  # position of the offending entry in the watched sequence
    name: str
    kind: str  # "requested" (a new instant's time) or "completion"
    time: str
    max_before: str  # the largest time seen in an earlier poll
    max_before_name: str  # the file that carried it


def _key(instant_time: str) -> str:
    return instant_time.ljust(_WIDTH, "0")


def judge(entries: Sequence[SeenInstant]) -> list[Violation]:
    """Every new instant's requested time and every completion time must be strictly
    greater than all times seen in earlier polls (files of one poll are unordered, so they
    are not judged against each other). The requested time of an instant already seen in
    another state (its inflight, its completed file) is not new and not judged again."""
    violations: list[Violation] = []
    best, best_name = "", ""  # the largest time seen in polls before the current one
    pending_best, pending_name = "", ""  # ... including the current poll
    known: set[str] = set()
    poll = None
    for index, entry in enumerate(entries):
        if entry.poll != poll:
            poll, best, best_name = entry.poll, pending_best, pending_name
        times = [] if entry.requested in known else [("requested", entry.requested)]
        if entry.completed is not None:
            times.append(("completion", entry.completed))
        known.add(entry.requested)
        for kind, value in times:
            if best and _key(value) <= _key(best):
                violations.append(Violation(index, entry.name, kind, value, best, best_name))
            if _key(value) > _key(pending_best):
                pending_best, pending_name = value, entry.name
    return violations
