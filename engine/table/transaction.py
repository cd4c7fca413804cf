"""Transaction: begin / write / commit / abort around one instant."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

import pyarrow as pa

from engine.layout.file_names import new_write_token
from engine.table.stats import WriteStat
from engine.timeline.instant import Instant


class TransactionTable(Protocol):
    """What a transaction calls of its table (engine/table/table.py Table)."""

    def start_instant(
        self, action: str | None = None, metadata: dict[str, Any] | None = None
    ) -> Instant: ...

    def write_files(
        self,
        instant: Instant | str,
        records: pa.Table,
        op: str = "upsert",
        write_token: str | None = None,
        prior: Iterable[WriteStat | dict[str, Any]] | None = None,
    ) -> list[WriteStat]: ...

    def commit(
        self,
        instant: Instant | str,
        stats: Iterable[WriteStat | dict[str, Any]],
        metadata: dict[str, Any] | None = None,
        guard: Callable[[], None] | None = None,
    ) -> str: ...

    def rollback(self, instant: Instant | str, force: bool = False) -> Instant | None: ...


class Transaction:
    def __init__(
        self,
        table: TransactionTable,
        action: str | None = None,
        metadata: dict[str, Any] | None = None,
    ):
        self.table, self.action, self.metadata = table, action, metadata
        self.instant: Instant | None = None
        self.stats: list[WriteStat] = []
        self.completion_time: str | None = None
        self._done = False

    def begin(self) -> Instant:
        if self.instant is None:
            self.instant = self.table.start_instant(self.action, self.metadata)
        return self.instant

    def write(self, records: pa.Table, op: str = "upsert") -> list[WriteStat]:
        instant = self.begin()
        token = new_write_token(stage=len(self.stats))  # each write of the transaction a stage
        stats = self.table.write_files(instant, records, op, token, prior=self.stats)
        self.stats += stats
        return stats

    def commit(
        self, metadata: dict[str, Any] | None = None, guard: Callable[[], None] | None = None
    ) -> str:
        instant = self.begin()
        self.completion_time = self.table.commit(instant, self.stats, metadata, guard)
        self._done = True
        return self.completion_time

    def abort(self) -> None:
        """Roll back the instant (its files are deleted); a no-op if nothing was begun."""
        if self.instant is not None and not self._done:
            self._done = True
            self.table.rollback(self.instant)

    def __enter__(self) -> Transaction:
        self.begin()
        return self

    def __exit__(self, exc_type: type | None, exc: BaseException | None, tb: object) -> None:
        if exc_type is not None:
            self.abort()
        elif not self._done:
            try:
                self.commit()
            except BaseException:
                self.abort()  # e.g. a write conflict: do not leave the instant inflight
                raise
