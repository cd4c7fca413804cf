"""Where the stream writes its history events (kinds and keys: docs/history.md)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

Recorder = Callable[[str, dict[str, Any]], None]


def null_recorder(kind: str, fields: dict[str, Any]) -> None:
    """Default: record nothing."""


class ListRecorder:
    """Keeps events in memory (tests, benchmarks, and a driver that batches them out)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()

    def __call__(self, kind: str, fields: dict[str, Any]) -> None:
        with self._lock:
            self.events.append((kind, dict(fields)))

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        with self._lock:
            return [f for k, f in self.events if k == kind]
