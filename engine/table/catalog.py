"""Which data files each completed instant made visible, and file-system views over them.

Visibility comes from commit metadata, not from listing: a file is visible only if a
completed instant lists it. Files of pending, failed or rolled-back instants, and files a
crashed task attempt left behind (same instant, another write token), are never read.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pyarrow as pa

from engine.config import Safety
from engine.layout.file_names import DataFile, data_file
from engine.layout.file_slices import FileSystemView, build_view
from engine.storage import Storage
from engine.table.data_files import decode_log, is_log
from engine.table.file_cache import FileCache
from engine.timeline.active import ActiveTimeline
from engine.timeline.instant import COMMIT_ACTIONS, Instant


class Catalog:
    def __init__(
        self,
        storage: Storage,
        timeline: ActiveTimeline,
        safety: Safety,
        cache: FileCache,
        key_type: Callable[[], tuple[str, pa.DataType]],
    ) -> None:
        self.storage, self.timeline, self.safety, self.cache = storage, timeline, safety, cache
        self.key_type = key_type  # (key column, its type): delete blocks hold keys as strings
        self._files: dict[str, list[DataFile]] = {}  # completed instant file name -> files
        self._plans: dict[str, list[str]] = {}  # pending compaction -> planned file ids
        self._latest: tuple[tuple, FileSystemView] | None = None
        self._lock = threading.RLock()

    def files_of(self, instant: Instant) -> list[DataFile]:
        """Data files a completed instant made visible (from its commit metadata)."""
        key = instant.file_name
        files = self._files.get(key)
        if files is None:
            meta = self.timeline.read_metadata(instant)
            files = [data_file(s.file_name) for s in meta.stats]
            self._files[key] = files
        return files

    def planned_file_ids(self, compaction: Instant) -> list[str]:
        ids = self._plans.get(compaction.requested_time)
        if ids is None:
            plan = self.timeline.read_metadata(compaction).compaction_plan or []
            ids = self._plans[compaction.requested_time] = [p["file_id"] for p in plan]
        return ids

    def view(self, as_of: str | None = None) -> FileSystemView:
        """The view of the latest committed state, or as of a completion time."""
        if as_of is not None:
            return self._build(as_of)
        signature = self._signature()
        with self._lock:
            if self._latest is not None and self._latest[0] == signature:
                return self._latest[1]
        view = self._build(None)
        with self._lock:
            self._latest = (signature, view)
        return view

    def _signature(self) -> tuple:
        tl = self.timeline
        return (
            len(tl.completed()),
            tl.archive.version,
            tl.last_completion_time(),
            tuple(i.requested_time for i in tl.pending("compaction")),
        )

    def _build(self, as_of: str | None) -> FileSystemView:
        completed = self.timeline.completed(include_archived=True)
        files: list[tuple[DataFile, str]] = []
        pending: dict[str, list[str]] = {}
        for instant in completed:
            if instant.action not in COMMIT_ACTIONS:
                continue
            if as_of is not None and instant.completed_at > as_of:
                if instant.action == "compaction":  # not done yet at as_of: a pending boundary
                    pending[instant.requested_time] = [f.file_id for f in self.files_of(instant)]
                continue
            files += [(f, instant.completed_at) for f in self.files_of(instant)]
        for instant in self.timeline.pending("compaction"):
            pending[instant.requested_time] = self.planned_file_ids(instant)
        return build_view(files, pending, self.safety.completion_time_slicing)

    def read(self, data_file: DataFile | str, columns: list[str] | None = None) -> pa.Table:
        """A data file's contents, or only `columns` of it (those it has); cached."""
        name = data_file if isinstance(data_file, str) else data_file.name
        if columns is None:
            return self.cache.get(name, lambda: self._load(name))

        def load() -> pa.Table:
            whole = self.cache.peek(name)
            if whole is None and is_log(name):
                whole = self.read(name)
            if whole is not None:
                return whole.select([c for c in columns if c in whole.column_names])
            return self.storage.read_parquet(name, columns=columns)

        return self.cache.get(f"{name}#{','.join(columns)}", load)

    def _load(self, name: str) -> pa.Table:
        if not is_log(name):
            return self.storage.read_parquet(name)
        key, key_type = self.key_type()
        data = self.storage.read_bytes(name)
        return decode_log(data, name, key, key_type, self.storage.full_path(name))

    def read_keys(self, data_file: DataFile, key: str) -> pa.ChunkedArray:
        """Only the key column (dynamic index, pk check); cached apart from whole files."""
        return self.read(data_file, [key]).column(key)
