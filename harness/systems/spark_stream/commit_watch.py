"""A table format's commit log as the runner sees it: its commit files in the order they
appeared, on the runner's monotonic clock (DESIGN.md "Systems under test", commit log).

Delta's `_delta_log/<version>.json` and Iceberg's `metadata/v<N>.metadata.json` (hadoop
catalog) are both counters written with put-if-absent: commit N+1 is written by a writer
that read N. Iceberg's JDBC catalog commits by swapping its pointer to a metadata file, so
there the log lists the files the pointer's chain names (CommitLog.committed). The
watch records each commit file the first time it sees it, read by the format's own parser
into a SeenCommit (the batch id the commit records for the stream, the files it adds and
removes), and notes when each of Spark's `offsets/N` appeared: a batch's commit latency
runs from Spark planning it to its commit appearing, both on this clock.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path


@dataclass(frozen=True)
class SeenCommit:
    """One commit file, the first time the watch saw it (files first seen in one poll
    share `seen_s` and `poll`: their relative order is not known)."""

    seen_s: float
    poll: int
    version: int  # the log's counter: Delta's version, Iceberg's metadata version
    batch: int | None = None  # the streaming batch id the commit records, if any
    added: tuple[str, ...] = ()  # data files, relative to the table's folder
    removed: tuple[str, ...] = ()
    sequence: int | None = None  # Iceberg's snapshot sequence number
    snapshot: int | None = None  # Iceberg's current snapshot id after the commit
    parent: int | None = None  # that snapshot's parent


@dataclass(frozen=True)
class CommitLog:
    """Where a format keeps its commit files and how one is read."""

    folder: str  # relative to the table's folder
    name: re.Pattern[str]  # a commit file's name; group 1 is its version
    read: Callable[[Path, int], SeenCommit]  # (file, version) -> the commit, seen_s=0
    first: int  # the first version a table's log holds
    # Where a file's appearance is not its commit (a catalog swaps a pointer to it): the
    # table -> its committed files. None: every commit file in `folder` is committed.
    committed: Callable[[Path], list[Path]] | None = None

    def files(self, table: Path) -> list[tuple[int, Path]]:
        """(version, file) of each committed version, in version order."""
        folder = table / self.folder
        if self.committed is not None:
            paths = self.committed(table)
        else:
            paths = [folder / n for n in os.listdir(folder)] if folder.is_dir() else []
        matches = ((self.name.match(p.name), p) for p in paths)
        return sorted((int(m.group(1)), p) for m, p in matches if m)


class CommitWatch:
    """Polls the log every `interval_s` on a thread of its own; `on_new` gets each poll's
    new commits, in version order (a seam may kill the driver from there)."""

    def __init__(
        self,
        log: CommitLog,
        table_path: str | Path,
        checkpoint_dir: str | Path,
        interval_s: float = 0.005,
        on_new: Callable[[list[SeenCommit]], None] | None = None,
    ) -> None:
        self.log = log
        self.table = Path(table_path)
        self.offsets = Path(checkpoint_dir) / "offsets"
        self.interval_s = interval_s
        self.on_new = on_new
        self.planned_seen: dict[int, float] = {}
        self._seen: set[int] = set()
        self._order: list[SeenCommit] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._poll = 0
        self.error: BaseException | None = None

    def entries(self) -> list[SeenCommit]:
        with self._lock:
            return list(self._order)

    def poll(self) -> list[SeenCommit]:
        """One look at the log: the commits not seen before."""
        self._poll += 1
        now = time.monotonic()
        for name in os.listdir(self.offsets) if self.offsets.is_dir() else []:
            if name.isdigit():
                self.planned_seen.setdefault(int(name), now)
        new = []
        for version, path in self.log.files(self.table):
            if version not in self._seen:
                commit = self.log.read(path, version)
                new.append(_seen_at(commit, now, self._poll))
        with self._lock:
            self._seen.update(c.version for c in new)
            self._order.extend(new)
        if new and self.on_new is not None:
            self.on_new(new)
        return new

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="commit-watch", daemon=True)
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


def _seen_at(commit: SeenCommit, seen_s: float, poll: int) -> SeenCommit:
    return replace(commit, seen_s=seen_s, poll=poll)
