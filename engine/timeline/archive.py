"""The archived timeline: an LSM tree of Parquet runs in `.hoodie/timeline/history/`.

Runs are `<minCompletion>_<maxCompletion>_<level>.parquet` with one row per completed
instant (requested_time, completion_time, action, metadata: the completed file's bytes,
an Avro HoodieCommitMetadata). `manifest_N` lists the live runs; `_version_` names the
current N. Writers publish a run, then a new manifest (put-if-absent), then the version;
readers follow the version. When a level holds `batch` runs, the oldest `batch` are
merged into one run of the next level.

Archiving holds the table lock; its manifest and version writes and its deletes of merged
runs go through the table's fence (engine/table/fencing.py), so a zombie coordinator
resumed after its successor's takeover changes nothing here. A run file itself is not
fenced: no reader sees it before a manifest lists it, and its name (its instants'
completion range and level) always holds the same instants.

Hudi's own LSM history has this folder and run naming but other run contents (Avro
`HoodieLSMTimelineInstant` rows) and manifest format; hudi-rs 0.5.0 does not read
`timeline/history/` at all (its layout-2 archived loader returns no instants), so a Hudi
reader sees the active timeline only: archived instants are invisible to it.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from engine.storage import Storage
from engine.timeline.instant import COMPLETED, Instant

HISTORY_DIR = ".hoodie/timeline/history"
VERSION_FILE = f"{HISTORY_DIR}/_version_"
_SCHEMA = pa.schema(
    [
        ("requested_time", pa.string()),
        ("completion_time", pa.string()),
        ("action", pa.string()),
        ("metadata", pa.binary()),
    ]
)


@dataclass(frozen=True)
class _Run:
    name: str
    level: int


class ArchivedTimeline:
    def __init__(self, storage: Storage, batch: int = 10) -> None:
        self.storage, self.batch = storage, batch
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
        runs = [_Run(r["name"], r["level"]) for r in manifest["runs"]]
        by_time: dict[str, tuple[Instant, str]] = {}
        rows = []
        for run in runs:
            t = self.storage.read_parquet(
                f"{HISTORY_DIR}/{run.name}", columns=["requested_time", "completion_time", "action"]
            )
            cols = [t.column(i).to_pylist() for i in range(3)]
            for req, comp, action in zip(*cols, strict=True):
                # A crash between archiving and deleting the active files can archive an
                # instant twice; both copies are identical.
                by_time.setdefault(req, (Instant(req, action, COMPLETED, comp), run.name))
                rows.append(Instant(req, action, COMPLETED, comp))
        self.version, self._runs, self._by_time, self._rows = version, runs, by_time, rows
        self._ordered = sorted((i for i, _ in by_time.values()), key=lambda i: i.completed_at)
        self._max_time = manifest.get("max_time")
        self._meta_cache = {
            k: v for k, v in self._meta_cache.items() if k in {r.name for r in runs}
        }

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
                    f"{HISTORY_DIR}/{run}", columns=["requested_time", "metadata"]
                )
                reqs, metas = t.column(0).to_pylist(), t.column(1).to_pylist()
                self._meta_cache[run] = dict(zip(reqs, metas, strict=True))
            return self._meta_cache[run][requested_time]

    # -- writing (the caller holds the table lock) ---------------------------------------

    def append(self, entries: list[tuple[Instant, bytes]]) -> None:
        """Archive completed instants with their completed files' bytes as one new level-0
        run."""
        if not entries:
            return
        self.reload()
        run = self._write_run(entries, level=0)
        runs = [*self._runs, run]
        max_time = max([self._max_time or "", *(_max_of(i) for i, _ in entries)])
        self._publish(runs, max_time)
        self._compact()

    def _write_run(self, entries: list[tuple[Instant, bytes]], level: int) -> _Run:
        entries = sorted(entries, key=lambda e: e[0].completed_at)
        name = f"{entries[0][0].completion_time}_{entries[-1][0].completion_time}_{level}.parquet"
        table = pa.Table.from_pydict(
            {
                "requested_time": [i.requested_time for i, _ in entries],
                "completion_time": [i.completion_time for i, _ in entries],
                "action": [i.action for i, _ in entries],
                "metadata": [m for _, m in entries],
            },
            schema=_SCHEMA,
        )
        self.storage.write_parquet(f"{HISTORY_DIR}/{name}", table)
        return _Run(name, level)

    def _publish(self, runs: list[_Run], max_time: str | None) -> None:
        version = self.version + 1
        manifest = {
            "runs": [{"name": r.name, "level": r.level} for r in runs],
            "max_time": max_time,
        }
        self._put(f"{HISTORY_DIR}/manifest_{version}", json.dumps(manifest).encode(), True)
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
            entries = []
            for run in victims:
                t = self.storage.read_parquet(f"{HISTORY_DIR}/{run.name}")
                rows = zip(*(t.column(i).to_pylist() for i in range(4)), strict=True)
                entries += [(Instant(r, a, COMPLETED, c), m) for r, c, a, m in rows]
            merged = self._write_run(_dedupe(entries), level + 1)
            keep = [r for r in self._runs if r not in victims]
            self._publish([*keep, merged], self._max_time)
            for run in victims:
                self._delete(f"{HISTORY_DIR}/{run.name}")

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


def _max_of(instant: Instant) -> str:
    return max(instant.requested_time, instant.completion_time or "")


def _dedupe(entries: list[tuple[Instant, bytes]]) -> list[tuple[Instant, bytes]]:
    """One row per completion: copies of one (an archival a crash repeated) are identical,
    while two completion times of one instant are two completions, kept as evidence."""
    seen: dict[tuple[str, str | None], tuple[Instant, bytes]] = {}
    for entry in entries:
        seen.setdefault((entry[0].requested_time, entry[0].completion_time), entry)
    return list(seen.values())
