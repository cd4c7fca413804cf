"""Delta's commit log as the runner sees it: `_delta_log/<version>.json` files in the order
they appeared, on the runner's monotonic clock.

A Delta version is a counter, not a clock reading: version N+1 is written only by a
writer that read version N, with put-if-absent (DESIGN.md "Systems under test", commit
log). The watch records each version file the first time it sees it, with what the
version says of the stream: its `txn` action (the app id and the batch id that make a
replay idempotent), the files it adds and removes, and the rows it adds. `judge` checks
the log from outside: versions from 0 with no gap, each in the order it appeared, every
added file present and no file added by two versions.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

VERSION_RE = re.compile(r"^(\d{20})\.json$")


@dataclass(frozen=True)
class SeenVersion:
    """One version file, the first time the watch saw it (files first seen in one poll
    share `seen_s` and `poll`: their relative order is not known)."""

    seen_s: float
    poll: int
    version: int
    txn: dict[str, int] = field(default_factory=dict)  # appId -> version (a batch id)
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    rows_added: int = 0
    operation: str | None = None


def log_folder(table_path: str | Path) -> Path:
    return Path(table_path) / "_delta_log"


def read_version(path: Path, seen_s: float = 0.0, poll: int = 0) -> SeenVersion:
    """A version file's actions (one JSON object per line); ValueError if unreadable."""
    txn: dict[str, int] = {}
    added: list[str] = []
    removed: list[str] = []
    rows, operation = 0, None
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        action = json.loads(line)
        if "txn" in action:
            txn[str(action["txn"]["appId"])] = int(action["txn"]["version"])
        elif "add" in action:
            added.append(str(action["add"]["path"]))
            stats = json.loads(action["add"].get("stats") or "{}")
            rows += int(stats.get("numRecords", 0))
        elif "remove" in action:
            removed.append(str(action["remove"]["path"]))
        elif "commitInfo" in action:
            operation = action["commitInfo"].get("operation")
    version = int(path.name.split(".")[0])
    return SeenVersion(seen_s, poll, version, txn, tuple(added), tuple(removed), rows, operation)


class LogWatch:
    """Polls `_delta_log` every `interval_s` on a thread of its own; `on_new` gets each
    poll's new versions (a seam may kill the driver from there). It also notes when each
    of Spark's `offsets/N` appeared: a batch's commit latency runs from Spark planning it
    to its version appearing, both on this clock."""

    def __init__(
        self,
        table_path: str | Path,
        checkpoint_dir: str | Path,
        interval_s: float = 0.005,
        on_new: Callable[[list[SeenVersion]], None] | None = None,
    ) -> None:
        self.folder = log_folder(table_path)
        self.offsets = Path(checkpoint_dir) / "offsets"
        self.planned_seen: dict[int, float] = {}
        self.interval_s = interval_s
        self.on_new = on_new
        self._seen: dict[str, SeenVersion] = {}
        self._order: list[SeenVersion] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._poll = 0
        self.error: BaseException | None = None

    def entries(self) -> list[SeenVersion]:
        with self._lock:
            return list(self._order)

    def poll(self) -> list[SeenVersion]:
        """One look at the folder: the versions not seen before, in version order."""
        self._poll += 1
        now = time.monotonic()
        for name in os.listdir(self.offsets) if self.offsets.is_dir() else []:
            if name.isdigit():
                self.planned_seen.setdefault(int(name), now)
        names = sorted(p.name for p in self.folder.iterdir()) if self.folder.is_dir() else []
        new = [
            read_version(self.folder / n, now, self._poll)
            for n in names
            if VERSION_RE.match(n) and n not in self._seen
        ]
        with self._lock:
            for seen in new:
                self._seen[f"{seen.version:020d}.json"] = seen
                self._order.append(seen)
        if new and self.on_new is not None:
            self.on_new(new)
        return new

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="delta-log-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.error is None:
            self.poll()  # what the last batches wrote before the stop

    def _run(self) -> None:
        try:
            while not self._stop.wait(self.interval_s):
                self.poll()
        except BaseException as exc:  # kept for the caller
            self.error = exc


@dataclass(frozen=True)
class LogViolation:
    rule: str
    detail: str


def judge(entries: Sequence[SeenVersion], table_path: str | Path) -> list[LogViolation]:
    """The log's own rules, from outside: versions 0..N with no gap, a later poll never
    finds a lower version than an earlier one, every added file is on storage, and no file
    is added by two versions."""
    out: list[LogViolation] = []
    versions = sorted(e.version for e in entries)
    if versions != list(range(len(versions))):
        out.append(LogViolation("contiguous", f"versions seen: {versions[:20]}"))
    highest = -1
    for poll in sorted({e.poll for e in entries}):
        found = [e.version for e in entries if e.poll == poll]
        if min(found) < highest:
            out.append(LogViolation("order", f"version {min(found)} appeared after {highest}"))
        highest = max(highest, *found)
    owner: dict[str, int] = {}
    for e in sorted(entries, key=lambda e: e.version):
        for path in e.added:
            if path in owner:
                out.append(LogViolation("added_twice", f"{path}: v{owner[path]} and v{e.version}"))
            owner[path] = e.version
    live = set(owner) - {p for e in entries for p in e.removed}
    out += [
        LogViolation("missing_file", f"{path} (added by v{owner[path]})")
        for path in sorted(live)
        if not (Path(table_path) / path).is_file()
    ]
    return out
