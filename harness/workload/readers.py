"""Concurrent readers: snapshot, as-of and incremental reads while the stream writes."""

from __future__ import annotations

import random
import threading
from collections.abc import Callable
from typing import Any

from engine.table import Table, cleaning
from harness.history import HistoryWriter
from harness.workload.reads import perform_read


def _latest_completion(table: Table) -> str | None:
    completed = table.timeline.completed(include_archived=True)
    return max((i.completed_at for i in completed), default=None)


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
        self._pulled_to: str | None = None

    def _attempt(self, read_kind: str | None, read: Callable[[], Any], **where: Any) -> bool:
        """One read, recorded as a `read` event, or as a `read_error` if it raised: a failed
        read is evidence (counted by the checks), not a crash of the run. A read whose point
        a clean moved out of the retention window meanwhile is recorded as
        `read_out_of_window`: its files may be gone, which is no lost data. A snapshot's
        point is the latest completion of the timeline it loaded (a commit and a clean
        that retains one commit can land while it reads)."""
        try:
            record = read()
        except Exception as exc:
            point = where.get("as_of", where.get("begin"))
            if read_kind == "snapshot":
                point = _latest_completion(self.table)  # as the read loaded it
                where = {"as_of": point}
            out = read_kind in ("snapshot", "as_of", "incremental") and not cleaning.in_window(
                self.table.reload(), point
            )
            self.history.record(
                "read_out_of_window" if out else "read_error",
                reader=self.reader,
                read_kind=read_kind,
                error=f"{type(exc).__name__}: {exc}",
                **where,
            )
            return False
        if record is not None:
            self.history.record("read", reader=self.reader, **record)
        return True

    def read_once(self) -> None:
        table = self.table
        snapshot = self._attempt(
            "snapshot", lambda: perform_read(table.reload(), "snapshot", bank=self.bank)
        )
        if not snapshot:
            return
        # Time travel and pulls stay inside the retention window (engine/table/cleaning.py):
        # before it, a clean may have deleted the files they would read.
        boundary = cleaning.retained_from(table) or ""
        completed = [
            i.completed_at
            for i in table.timeline.completed(include_archived=True)
            if i.action not in ("rollback", cleaning.ACTION) and i.completed_at >= boundary
        ]
        if not completed:
            return
        as_of = self.rng.choice(completed)
        self._attempt(
            "as_of", lambda: perform_read(table, "as_of", as_of=as_of, bank=self.bank), as_of=as_of
        )
        begin, end = self._pulled_to, completed[-1]
        if not cleaning.in_window(table, begin):
            begin = boundary  # the pull goes on from the window's start
        if end != begin:

            def pull() -> dict[str, Any]:
                return perform_read(table, "incremental", begin=begin, end=end, bank=self.bank)

            if self._attempt("incremental", pull, begin=begin, end=end):
                self._pulled_to = end

    def run(self) -> None:
        while not self.stop_event.wait(self.every_s):
            # Anything read_once does not attribute to one read (no read kind) still counts.
            self._attempt(None, self.read_once)

    def stop(self) -> None:
        self.stop_event.set()
        self.join()
        self.table.close()
