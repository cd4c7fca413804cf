"""Coordinator and writer state files, through engine.storage (atomic replace on write).

One JSON file per checkpoint id; the newest few are kept. Living on the table's (or the
Spark checkpoint's) storage, they survive the driver and executors, and the harness's
storage faults reach them too.
"""

from __future__ import annotations

import json
from typing import Any

from engine.storage import Storage
from engine.stream.write_meta import WriteMetaEvent
from engine.table.fence_domains import current_epoch
from engine.table.sealing import advance_epoch


class CheckpointStateStore:
    """JSON payloads keyed by checkpoint id in one directory of a Storage."""

    SUFFIX = ".json"

    def __init__(self, storage: Storage, directory: str, keep: int = 5) -> None:
        self.storage = storage
        self.dir = directory.strip("/")
        self.keep = keep

    def _path(self, checkpoint_id: int) -> str:
        return f"{self.dir}/{checkpoint_id}{self.SUFFIX}"

    def save(self, checkpoint_id: int, payload: dict[str, Any]) -> int:
        """Write the state for a checkpoint; return its size in bytes."""
        data = json.dumps(payload, separators=(",", ":")).encode()
        self.storage.write_bytes(self._path(checkpoint_id), data)
        for old in self.checkpoint_ids()[: -self.keep]:
            self.storage.delete(self._path(old), missing_ok=True)
        return len(data)

    def load(self, checkpoint_id: int) -> dict[str, Any] | None:
        try:
            return json.loads(self.storage.read_bytes(self._path(checkpoint_id)))
        except FileNotFoundError:
            return None

    def checkpoint_ids(self) -> list[int]:
        names = self.storage.list(self.dir)
        return sorted(
            int(n[: -len(self.SUFFIX)])
            for n in names
            if n.endswith(self.SUFFIX) and not n.startswith(".")
        )


class WriterStateStore:
    """Each writer task's WriteMeta for the checkpoints it finished, by task."""

    def __init__(self, storage: Storage, directory: str, keep: int = 3) -> None:
        self.storage = storage
        self.dir = directory.strip("/")
        self.keep = keep

    def _store(self, task_id: int) -> CheckpointStateStore:
        return CheckpointStateStore(self.storage, f"{self.dir}/task-{task_id}", self.keep)

    def save(self, event: WriteMetaEvent) -> int:
        return self._store(event.task_id).save(event.checkpoint_id, event.to_dict())

    def load(self, task_id: int, checkpoint_id: int) -> WriteMetaEvent | None:
        d = self._store(task_id).load(checkpoint_id)
        return None if d is None else WriteMetaEvent.from_dict(d)


class EpochStore:
    """The coordinator epoch: a restarted coordinator takes a higher one, fencing the old.

    Epochs are fence domains (engine/table/fencing.py): taking one is an exclusive create,
    and it seals every older epoch, so a zombie's staged timeline writes fail from then on.
    """

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    def current(self) -> int:
        return current_epoch(self.storage)

    def advance(self) -> int:
        return advance_epoch(self.storage)
