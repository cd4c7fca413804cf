"""Hudi's archival and cleaning as table services of the stream (`table.services`): every
checkpoint interval the driver cleans file slices older than the last N commits need
(engine/table/cleaning.py) and archives the oldest completed instants beyond the ones it
keeps, while the stream writes and faults fire; before cleaning it rolls back failed
writes whose heartbeats expired (Hudi's LAZY failed-writes cleaning). It shares the
coordinator's table handle, so its timeline writes carry the coordinator's epoch (a
zombie's services are fenced too)."""

from __future__ import annotations

import threading
import time

from engine.errors import FencedError
from engine.table import Table, cleaning
from harness.history import HistoryWriter


class TableServices(threading.Thread):
    def __init__(
        self,
        table: Table,
        every_s: float,
        history: HistoryWriter,
        *,
        archive_keep: int,
        clean_retain_commits: int,
    ) -> None:
        super().__init__(name="table-services", daemon=True)
        self.table, self.every_s, self.history = table, every_s, history
        self.archive_keep, self.clean_retain_commits = archive_keep, clean_retain_commits
        self._stop_event = threading.Event()
        self.error: BaseException | None = None

    def run_once(self) -> None:
        if self.clean_retain_commits > 0:
            # As Hudi's cleaner with the LAZY failed-writes policy: first roll back the
            # writes whose heartbeat expired (a crashed batch writer's, an instant the
            # coordinator left without one), so their files are removed, never read.
            rolled_back = self.table.rollback_failed_writes()
            if rolled_back:
                self.history.record("failed_writes_rolled_back", instants=rolled_back)
            started = time.time()
            done = cleaning.clean(self.table, self.clean_retain_commits)
            if done is not None:
                plan = self.table.timeline.read_metadata(done).extra.get(cleaning.PLAN_KEY) or {}
                self.history.record(
                    "clean",
                    instant=done.requested_time,
                    completed=done.completion_time,
                    earliest_retained=plan.get("earliest_retained"),
                    files=len(plan.get("files", [])),
                    latency_ms=(time.time() - started) * 1000,
                )
        if self.archive_keep > 0:
            moved = self.table.archive(keep=self.archive_keep)
            if moved:
                self.history.record("archive", instants=moved, keep=self.archive_keep)

    def _cycle(self) -> bool:
        try:
            self.run_once()
        except Exception as exc:  # recorded; the driver stops on it (a zombie's: fenced)
            self.error = exc
            self.history.record(
                "table_service_failed",
                error=f"{type(exc).__name__}: {exc}",
                fenced=isinstance(exc, FencedError),
            )
            return False
        return True

    def run(self) -> None:
        while not self._stop_event.wait(self.every_s):
            if not self._cycle():
                return

    def stop(self) -> None:
        """Stop, after one last cycle (the run's last commits are cleaned and archived
        too, however short the run was), unless a cycle failed."""
        self._stop_event.set()
        self.join()
        if self.error is None:
            self._cycle()
