"""Coordinator and writer state files on the table's file system.

One JSON file per checkpoint id, written atomically (temp file + rename) so a crash
mid-write leaves the previous state readable; the newest few are kept.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import pyarrow.fs as pafs

from engine.stream.write_meta import WriteMetaEvent


def resolve_fs(path: str, fs: pafs.FileSystem | None = None) -> tuple[pafs.FileSystem, str]:
    if fs is not None:
        return fs, path
    return pafs.FileSystem.from_uri(path)


def atomic_write(fs: pafs.FileSystem, path: str, data: bytes) -> None:
    parent = path.rsplit("/", 1)[0]
    fs.create_dir(parent, recursive=True)
    tmp = f"{parent}/.tmp-{uuid.uuid4().hex}"
    with fs.open_output_stream(tmp) as out:
        out.write(data)
    fs.move(tmp, path)


def read_bytes(fs: pafs.FileSystem, path: str) -> bytes | None:
    try:
        with fs.open_input_stream(path) as f:
            return f.read()
    except FileNotFoundError:
        return None


class CheckpointStateStore:
    """JSON payloads keyed by checkpoint id in one directory."""

    SUFFIX = ".json"

    def __init__(self, directory: str, fs: pafs.FileSystem | None = None, keep: int = 5) -> None:
        self.fs, self.dir = resolve_fs(directory.rstrip("/"), fs)
        self.keep = keep

    def _path(self, checkpoint_id: int) -> str:
        return f"{self.dir}/{checkpoint_id}{self.SUFFIX}"

    def save(self, checkpoint_id: int, payload: dict[str, Any]) -> int:
        """Write the state for a checkpoint; return its size in bytes."""
        data = json.dumps(payload, separators=(",", ":")).encode()
        atomic_write(self.fs, self._path(checkpoint_id), data)
        for old in self.checkpoint_ids()[: -self.keep]:
            self.fs.delete_file(self._path(old))
        return len(data)

    def load(self, checkpoint_id: int) -> dict[str, Any] | None:
        data = read_bytes(self.fs, self._path(checkpoint_id))
        return None if data is None else json.loads(data)

    def checkpoint_ids(self) -> list[int]:
        selector = pafs.FileSelector(self.dir, allow_not_found=True)
        ids = []
        for info in self.fs.get_file_info(selector):
            name = info.base_name
            if name.endswith(self.SUFFIX) and not name.startswith("."):
                ids.append(int(name[: -len(self.SUFFIX)]))
        return sorted(ids)


class WriterStateStore:
    """Each writer task's WriteMeta for the checkpoint it last finished."""

    def __init__(self, directory: str, fs: pafs.FileSystem | None = None, keep: int = 3) -> None:
        self.fs, self.dir = resolve_fs(directory.rstrip("/"), fs)
        self.keep = keep

    def _store(self, task_id: int) -> CheckpointStateStore:
        return CheckpointStateStore(f"{self.dir}/task-{task_id}", self.fs, self.keep)

    def save(self, event: WriteMetaEvent) -> int:
        return self._store(event.task_id).save(event.checkpoint_id, event.to_dict())

    def load(self, task_id: int, checkpoint_id: int) -> WriteMetaEvent | None:
        d = self._store(task_id).load(checkpoint_id)
        return None if d is None else WriteMetaEvent.from_dict(d)


class EpochStore:
    """The coordinator epoch: a restarted coordinator takes a higher one, fencing the old."""

    def __init__(self, path: str, fs: pafs.FileSystem | None = None) -> None:
        self.fs, self.path = resolve_fs(path, fs)

    def current(self) -> int:
        data = read_bytes(self.fs, self.path)
        return -1 if data is None else int(data.decode())

    def advance(self) -> int:
        # Coordinators start one after another (the driver restarts), so read + write is
        # enough; a zombie only ever reads the epoch.
        epoch = self.current() + 1
        atomic_write(self.fs, self.path, str(epoch).encode())
        return epoch
