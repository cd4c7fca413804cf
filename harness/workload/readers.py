"""Concurrent readers: snapshot, as-of and incremental reads while the stream writes."""

from __future__ import annotations

import random
import threading

from engine.table import Table
from harness.history import HistoryWriter
from harness.workload.reads import perform_read


class ReaderThread(threading.Thread):
    def __init__(
        self,
        reader_id: int,
        table_path: str,
        every_s: float,
        history: HistoryWriter,
        bank: bool,
        seed: int,
    ) -> None:
        super().__init__(name=f"reader-{reader_id}", daemon=True)
        self.reader = f"reader:{reader_id}"
        self.table = Table.open(table_path, writer_id=self.reader)
        self.every_s = every_s
        self.history = history
        self.bank = bank
        self.rng = random.Random(seed * 1000 + reader_id)
        self.stop_event = threading.Event()
        self.errors: list[str] = []
        self._pulled_to: str | None = None

    def _record(self, **read) -> None:
        self.history.record("read", reader=self.reader, **read)

    def read_once(self) -> None:
        table = self.table.reload()
        self._record(**perform_read(table, "snapshot", bank=self.bank))
        completed = [
            i.completion_time
            for i in table.timeline.completed(include_archived=True)
            if i.action != "rollback"
        ]
        if completed:
            as_of = self.rng.choice(completed)
            self._record(**perform_read(table, "as_of", as_of=as_of, bank=self.bank))
            end = completed[-1]
            if end != self._pulled_to:
                pull = perform_read(
                    table, "incremental", begin=self._pulled_to, end=end, bank=self.bank
                )
                self._record(**pull)
                self._pulled_to = end

    def run(self) -> None:
        while not self.stop_event.wait(self.every_s):
            try:
                self.read_once()
            except Exception as exc:  # a failed read is evidence, not a crash of the run
                self.errors.append(f"{type(exc).__name__}: {exc}")
                self.history.record("read_error", reader=self.reader, error=str(exc))

    def stop(self) -> None:
        self.stop_event.set()
        self.join()
        self.table.close()
