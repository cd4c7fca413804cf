"""WriteMeta: what a writer task tells the coordinator about the files it wrote.

Mirrors Hudi's WriteMetadataEvent / EventBuffer / EventBuffers. Everything here is plain
data (JSON-safe dicts for write stats) because events travel over RPC and are persisted
in coordinator and writer state files.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field, replace
from typing import Any

# An empty bootstrap carries no instant: it only tells the coordinator "this task restarted".
EMPTY_INSTANT = ""


@dataclass(frozen=True)
class WriteMetaEvent:
    task_id: int
    checkpoint_id: int
    instant: str
    write_stats: tuple[dict[str, Any], ...] = ()
    last_batch: bool = False
    bootstrap: bool = False
    attempt: int = 0
    end_input: bool = False
    # Per-flush facts the commit record wants (rows, bytes, min/max source offset,
    # max event time); merged by sum / min / max.
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def is_empty_bootstrap(self) -> bool:
        return self.bootstrap and self.instant == EMPTY_INSTANT

    def merge_with(self, other: WriteMetaEvent) -> WriteMetaEvent:
        """Concatenate two events of the same task and instant (Hudi's mergeWith)."""
        if other.task_id != self.task_id or other.instant != self.instant:
            raise ValueError(
                f"cannot merge event of task {other.task_id} instant {other.instant!r} "
                f"into task {self.task_id} instant {self.instant!r}"
            )
        return replace(
            self,
            write_stats=self.write_stats + other.write_stats,
            last_batch=self.last_batch or other.last_batch,
            end_input=self.end_input or other.end_input,
            attempt=max(self.attempt, other.attempt),
            metadata=merge_metadata(self.metadata, other.metadata),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "checkpoint_id": self.checkpoint_id,
            "instant": self.instant,
            "write_stats": list(self.write_stats),
            "last_batch": self.last_batch,
            "bootstrap": self.bootstrap,
            "attempt": self.attempt,
            "end_input": self.end_input,
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> WriteMetaEvent:
        return cls(
            task_id=int(d["task_id"]),
            checkpoint_id=int(d["checkpoint_id"]),
            instant=str(d["instant"]),
            write_stats=tuple(d.get("write_stats", ())),
            last_batch=bool(d.get("last_batch", False)),
            bootstrap=bool(d.get("bootstrap", False)),
            attempt=int(d.get("attempt", 0)),
            end_input=bool(d.get("end_input", False)),
            metadata=dict(d.get("metadata", {})),
        )


_SUM_KEYS = ("rows", "bytes", "files", "flushes")
_MIN_KEYS = ("min_offset",)
_MAX_KEYS = ("max_offset", "max_event_time")


def merge_metadata(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = {**a, **b}
    for keys, fn in ((_SUM_KEYS, sum), (_MIN_KEYS, min), (_MAX_KEYS, max)):
        for k in keys:
            vals = [d[k] for d in (a, b) if d.get(k) is not None]
            if vals:
                out[k] = fn(vals)
    return out


class EventBuffer:
    """One slot per writer task for one instant."""

    def __init__(self, parallelism: int) -> None:
        self.slots: list[WriteMetaEvent | None] = [None] * parallelism

    def add(self, event: WriteMetaEvent) -> None:
        current = self.slots[event.task_id]
        # A bootstrap event is a task's complete saved state: it replaces, never adds,
        # so re-sending it after any restart is idempotent.
        if event.bootstrap or current is None:
            self.slots[event.task_id] = event
        else:
            self.slots[event.task_id] = current.merge_with(event)

    def clear(self, task_id: int) -> None:
        self.slots[task_id] = None

    def is_ready(self) -> bool:
        """Every task reported its last batch for this instant."""
        return all(e is not None and e.last_batch for e in self.slots)

    def is_empty(self) -> bool:
        return all(e is None or not e.write_stats for e in self.slots)

    def events(self) -> list[WriteMetaEvent]:
        return [e for e in self.slots if e is not None]

    def write_stats(self) -> list[dict[str, Any]]:
        return [s for e in self.events() for s in e.write_stats]

    def metadata(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for e in self.events():
            out = merge_metadata(out, e.metadata)
        return out

    def to_list(self) -> list[dict[str, Any] | None]:
        return [None if e is None else e.to_dict() for e in self.slots]

    @classmethod
    def from_list(cls, slots: list[dict[str, Any] | None]) -> EventBuffer:
        buf = cls(len(slots))
        buf.slots = [None if s is None else WriteMetaEvent.from_dict(s) for s in slots]
        return buf


@dataclass
class BufferEntry:
    checkpoint_id: int
    instant: str
    buffer: EventBuffer


class EventBuffers:
    """checkpoint id -> (instant, EventBuffer), iterated in ascending checkpoint order.

    Not thread-safe: the coordinator owns it and guards it with its own lock.
    """

    def __init__(self, parallelism: int) -> None:
        self.parallelism = parallelism
        self._entries: dict[int, BufferEntry] = {}
        self._keys: list[int] = []  # sorted; tiny (a few pending checkpoints)

    def __len__(self) -> int:
        return len(self._keys)

    def __contains__(self, checkpoint_id: int) -> bool:
        return checkpoint_id in self._entries

    def init_new(self, checkpoint_id: int, instant: str) -> BufferEntry:
        if checkpoint_id in self._entries:
            raise ValueError(f"checkpoint {checkpoint_id} already has an event buffer")
        entry = BufferEntry(checkpoint_id, instant, EventBuffer(self.parallelism))
        self._entries[checkpoint_id] = entry
        bisect.insort(self._keys, checkpoint_id)
        return entry

    def put(self, entry: BufferEntry) -> None:
        if entry.checkpoint_id not in self._entries:
            bisect.insort(self._keys, entry.checkpoint_id)
        self._entries[entry.checkpoint_id] = entry

    def get(self, checkpoint_id: int) -> BufferEntry | None:
        return self._entries.get(checkpoint_id)

    def remove(self, checkpoint_id: int) -> None:
        del self._entries[checkpoint_id]
        self._keys.remove(checkpoint_id)

    def entries(self) -> list[BufferEntry]:
        return [self._entries[k] for k in self._keys]

    def entries_before(self, checkpoint_id: int) -> list[BufferEntry]:
        end = bisect.bisect_left(self._keys, checkpoint_id)
        return [self._entries[k] for k in self._keys[:end]]

    def instants(self) -> list[str]:
        return [self._entries[k].instant for k in self._keys]

    def clear_task_from(self, task_id: int, checkpoint_id: int) -> None:
        """Task-only failover: drop what the task reported for checkpoints >= checkpoint_id."""
        for k in self._keys[bisect.bisect_left(self._keys, checkpoint_id) :]:
            self._entries[k].buffer.clear(task_id)

    def ready_to_dict(self) -> list[dict[str, Any]]:
        """Only fully reported entries: a partial one could never be committed safely."""
        return [
            {"checkpoint_id": e.checkpoint_id, "instant": e.instant, "slots": e.buffer.to_list()}
            for e in self.entries()
            if e.buffer.is_ready()
        ]

    @staticmethod
    def entry_from_dict(d: dict[str, Any]) -> BufferEntry:
        return BufferEntry(
            int(d["checkpoint_id"]), str(d["instant"]), EventBuffer.from_list(d["slots"])
        )
