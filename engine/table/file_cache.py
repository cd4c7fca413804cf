"""A bounded LRU cache of decoded data files (data files are immutable once written)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable

import pyarrow as pa


class FileCache:
    def __init__(self, max_bytes: int = 256 << 20) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[str, pa.Table] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, name: str, load: Callable[[], pa.Table]) -> pa.Table:
        with self._lock:
            hit = self._items.get(name)
            if hit is not None:
                self._items.move_to_end(name)
                return hit
        table = load()
        self.put(name, table)
        return table

    def peek(self, name: str) -> pa.Table | None:
        with self._lock:
            return self._items.get(name)

    def put(self, name: str, table: pa.Table) -> None:
        size = table.nbytes
        if size > self.max_bytes:
            return
        with self._lock:
            old = self._items.pop(name, None)
            if old is not None:
                self._bytes -= old.nbytes
            self._items[name] = table
            self._bytes += size
            while self._bytes > self.max_bytes:
                _, evicted = self._items.popitem(last=False)
                self._bytes -= evicted.nbytes

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0
