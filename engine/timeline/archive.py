"""The archived timeline: Apache Hudi 1.x's LSM tree of Parquet runs in
`.hoodie/timeline/history/`, in Hudi's own format, so Java Hudi loads it.

A run is `<minRequested>_<maxRequested>_<level>.parquet`, one row per completed instant:
Hudi's `HoodieLSMTimelineInstant` (instantTime = requested time, completionTime, action as
its completed file names it, metadata = the completed file's bytes, plan = the requested
file's bytes where it has some, version 1). `manifest_N` is Hudi's JSON list of the live
runs (`files`: `fileName`, `fileLen`); `_version_` names the current N. Writers publish a
run, then a new manifest (put-if-absent), then the version; readers follow the version.
When a level holds `batch` runs, the oldest `batch` are merged into one run of the next
level (Hudi's universal compaction; the engine keeps no older manifests for readers).

Archiving holds the table lock; its manifest and version writes and its deletes of merged
runs go through the table's fence (engine/table/fencing.py), so a zombie coordinator
resumed after its successor's takeover changes nothing here. A run file itself is not
fenced: no reader sees it before a manifest lists it, and a completion already archived is
never written again, so a name never comes to hold other rows. hudi-rs 0.5.0 does not read
`timeline/history/` (its layout-2 archived loader returns no instants).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from engine.storage import Storage
from engine.timeline.instant import COMPLETED, COMPLETED_AS, Instant

HISTORY_DIR = ".hoodie/timeline/history"
VERSION_FILE = f"{HISTORY_DIR}/_version_"
LSM_INSTANT_VERSION = 1  # Hudi's LSMTimeline.LSM_TIMELINE_INSTANT_VERSION_1
_RUN_NAME = re.compile(r"^(\d+)_(\d+)_(\d)\.parquet$")
_SCHEMA = pa.schema(
    [
        ("instantTime", pa.string()),
        ("completionTime", pa.string()),
        ("action", pa.string()),
        ("metadata", pa.binary()),
        ("plan", pa.binary()),
        pa.field("version", pa.int32(), nullable=False),
    ]
)


@dataclass(frozen=True)
class ArchivedEntry:
    """A completed instant as it is archived: its completed file's bytes and its plan
    (the requested file's bytes: a clean's or compaction's plan), if any."""

    instant: Instant
    metadata: bytes
    plan: bytes | None = None


@dataclass(frozen=True)
class _Run:
    name: str
    size: int

    @property
    def level(self) -> int:
        match = _RUN_NAME.match(self.name)
        return int(match.group(3)) if match else 0


class ArchivedTimeline:
    def __init__(self, storage: Storage, batch: int = 10, compaction_commits: bool = False) -> None:
        self.storage, self.batch = storage, batch
        # Merge-on-read: an archived `commit` is a compaction (engine/timeline/instant.py).
        self.compaction_commits = compaction_commits
        self.version = 0
        self._runs: list[_Run] = []
        self._by_time: dict[str, tuple[Instant, str]] = {}  # requested -> (instant, run)
        self._rows: list[Instant] = []  # every row of the live runs, copies included
        self._ordered: list[Instant] = []
        self._meta_cache: dict[str, dict[str, bytes]] = {}  # run -> requested -> metadata
        self._max_time: str | None = None
        self._lock = threading.RLock()
        # engine.table.fencing.Fence, set by the table: writes and deletes are fenced.
        self.fence: Any = None

    # -- reading -----------------------------------------------------------------------

    def reload(self) -> ArchivedTimeline:
        try:
            version = int(self.storage.read_bytes(VERSION_FILE).decode())
        except FileNotFoundError:
            version = 0
        with self._lock:
            if version != self.version:
                try:
                    self._load(version)
                except FileNotFoundError:
                    # A concurrent compaction replaced a run of that version: start over.
                    return self.reload()
        return self

    def _load(self, version: int) -> None:
        manifest = json.loads(self.storage.read_bytes(f"{HISTORY_DIR}/manifest_{version}"))
        runs = [_Run(f["fileName"], int(f.get("fileLen", 0))) for f in manifest["files"]]
        by_time: dict[str, tuple[Instant, str]] = {}
        rows = []
        for run in runs:
            for instant in self._instants_of(run.name):
                # Two completions of one instant (a collision) are two rows: the first
                # stands for the instant, both are evidence (`rows`).
                by_time.setdefault(instant.requested_time, (instant, run.name))
                rows.append(instant)
        self.version, self._runs, self._by_time, self._rows = version, runs, by_time, rows
        self._ordered = sorted((i for i, _ in by_time.values()), key=lambda i: i.completed_at)
        self._max_time = max((_max_of(i) for i in rows), default=None)
        self._meta_cache = {
            k: v for k, v in self._meta_cache.items() if k in {r.name for r in runs}
        }

    def _instants_of(self, run: str) -> list[Instant]:
        columns = ["instantTime", "completionTime", "action"]
        t = self.storage.read_parquet(f"{HISTORY_DIR}/{run}", columns=columns)
        cols = [t.column(c).to_pylist() for c in columns]
        return [self._instant(*row) for row in zip(*cols, strict=True)]

    def _instant(self, requested: str, completed: str, action: str) -> Instant:
        if action == "commit" and self.compaction_commits:
            action = "compaction"
        return Instant(requested, action, COMPLETED, completed)

    def instants(self) -> list[Instant]:
        """Archived instants ordered by completion time."""
        return list(self._ordered)

    def rows(self) -> list[Instant]:
        """Every archived row, copies included (`instants` keeps one per requested time):
        an instant completed twice is archived with two completion times, and a judge
        counts its completions here."""
        return list(self._rows)

    def __len__(self) -> int:
        return len(self._by_time)

    def get(self, requested_time: str) -> Instant | None:
        hit = self._by_time.get(requested_time)
        return hit[0] if hit else None

    def completion_time_of(self, requested_time: str) -> str | None:
        hit = self._by_time.get(requested_time)
        return hit[0].completion_time if hit else None

    def completed_in(self, begin_exclusive: str | None, end_inclusive: str | None) -> list[Instant]:
        return [
            i
            for i in self._ordered
            if (begin_exclusive is None or i.completed_at > begin_exclusive)
            and (end_inclusive is None or i.completed_at <= end_inclusive)
        ]

    def max_time(self) -> str | None:
        return self._max_time

    def metadata_bytes(self, requested_time: str) -> bytes:
        _, run = self._by_time[requested_time]
        with self._lock:
            if run not in self._meta_cache:
                t = self.storage.read_parquet(
                    f"{HISTORY_DIR}/{run}", columns=["instantTime", "metadata"]
                )
                reqs, metas = t.column(0).to_pylist(), t.column(1).to_pylist()
                self._meta_cache[run] = dict(zip(reqs, metas, strict=True))
            return self._meta_cache[run][requested_time]

    # -- writing (the caller holds the table lock) ---------------------------------------

    def append(self, entries: list[ArchivedEntry]) -> None:
        """Archive completed instants as one new level-0 run; a completion already archived
        (a crash repeated this archival) is not written again."""
        self.reload()
        archived = {_completion(i) for i in self._rows}
        entries = [e for e in entries if _completion(e.instant) not in archived]
        if not entries:
            return
        self._publish([*self._runs, self._write_run(entries, level=0)])
        self._compact()

    def _write_run(self, entries: list[ArchivedEntry], level: int) -> _Run:
        entries = sorted(entries, key=lambda e: e.instant.requested_time)
        first, last = entries[0].instant.requested_time, entries[-1].instant.requested_time
        name = f"{first}_{last}_{level}.parquet"
        table = pa.Table.from_pydict(
            {
                "instantTime": [e.instant.requested_time for e in entries],
                "completionTime": [e.instant.completion_time for e in entries],
                "action": [COMPLETED_AS.get(e.instant.action, e.instant.action) for e in entries],
                "metadata": [e.metadata for e in entries],
                "plan": [e.plan for e in entries],
                "version": [LSM_INSTANT_VERSION] * len(entries),
            },
            schema=_SCHEMA,
        )
        return _Run(name, self.storage.write_parquet(f"{HISTORY_DIR}/{name}", table))

    def _publish(self, runs: list[_Run]) -> None:
        version = self.version + 1
        manifest = {"files": [{"fileName": r.name, "fileLen": r.size} for r in runs]}
        body = json.dumps(manifest, indent=2).encode()
        self._put(f"{HISTORY_DIR}/manifest_{version}", body, True)
        self._put(VERSION_FILE, str(version).encode(), False)
        with self._lock:
            self._load(version)

    def _compact(self) -> None:
        while True:
            level = next(
                (
                    lv
                    for lv in sorted({r.level for r in self._runs})
                    if sum(r.level == lv for r in self._runs) >= self.batch
                ),
                None,
            )
            if level is None:
                return
            victims = sorted((r for r in self._runs if r.level == level), key=lambda r: r.name)
            victims = victims[: self.batch]
            entries = [e for run in victims for e in self._entries_of(run.name)]
            merged = self._write_run(entries, level + 1)
            keep = [r for r in self._runs if r not in victims]
            self._publish([*keep, merged])
            for run in victims:
                self._delete(f"{HISTORY_DIR}/{run.name}")

    def _entries_of(self, run: str) -> list[ArchivedEntry]:
        t = self.storage.read_parquet(f"{HISTORY_DIR}/{run}").to_pydict()
        instants = map(self._instant, t["instantTime"], t["completionTime"], t["action"])
        return list(map(ArchivedEntry, instants, t["metadata"], t["plan"]))

    def _put(self, path: str, data: bytes, exclusive: bool) -> None:
        if self.fence is not None:
            self.fence.put(path, data, exclusive=exclusive)
        elif exclusive:
            self.storage.put_if_absent(path, data)
        else:
            self.storage.write_bytes(path, data)

    def _delete(self, path: str) -> None:
        if self.fence is not None:
            self.fence.delete(path)
        else:
            self.storage.delete(path, missing_ok=True)


def _completion(instant: Instant) -> tuple[str, str | None]:
    return instant.requested_time, instant.completion_time


def _max_of(instant: Instant) -> str:
    return max(instant.requested_time, instant.completion_time or "")
