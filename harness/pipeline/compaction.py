"""The MOR compaction table service: every `every_s`, schedule a compaction of the file
groups that have log files and run it, while the stream keeps writing (so a compaction is
often scheduled while a log write is inflight: the case completion-time slicing handles)."""

from __future__ import annotations

import threading
import time

from engine.errors import FencedError
from engine.table import Table
from harness.history import HistoryWriter


class CompactionService(threading.Thread):
    def __init__(self, table: Table, every_s: float, history: HistoryWriter) -> None:
        super().__init__(name="compaction", daemon=True)
        self.table = table
        self.every_s = every_s
        self.history = history
        self._stop_event = threading.Event()
        self.error: BaseException | None = None

    def compact_once(self) -> None:
        started = time.time()
        planned = self.table.reload().schedule_compaction()
        if planned is None:
            return
        self.history.record("compaction_scheduled", instant=planned.requested_time)
        completed = self.table.run_compaction(planned)
        self.history.record(
            "compaction",
            instant=planned.requested_time,
            completed=completed,
            latency_ms=(time.time() - started) * 1000,
        )

    def run(self) -> None:
        while not self._stop_event.wait(self.every_s):
            try:
                self.compact_once()
            except Exception as exc:  # the driver's main loop stops on it
                self.error = exc
                self.history.record(
                    "compaction_failed",
                    error=f"{type(exc).__name__}: {exc}",
                    fenced=isinstance(exc, FencedError),
                )
                return

    def stop(self) -> None:
        self._stop_event.set()
        self.join()
