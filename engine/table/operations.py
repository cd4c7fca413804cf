"""The table operations a seam happens in, set explicitly where each operation runs.

A table handle reports its seams to its fence hooks (engine/table/fencing.py `Fence.seam`)
with the operation running in the calling thread (`operation` in the hook's info), so a
fault can name a seam by operation (engine/table/fault_points.py). The operation is a
context variable set by the entry points of each operation (the `runs` decorator); the
innermost one wins, so a commit that starts the next instant in its own hold reports the
instant's seams as the instant's, and a rollback a commit triggers reports its own. A
thread the engine starts runs in a fresh context: its seams name no operation.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextvars import ContextVar
from enum import StrEnum
from typing import ParamSpec, TypeVar


class Operation(StrEnum):
    INSTANT = "instant"  # creating an instant: start_instant (REQUESTED, INFLIGHT)
    COMMIT = "commit"  # completing one: commit, commit_and_start
    ROLLBACK = "rollback"  # a rollback, cleaning failed writes, voiding an abandoned claim
    COMPACTION = "compaction"  # scheduling and running one
    CLEAN = "clean"  # the cleaner
    ARCHIVE = "archive"  # archival


class Seam(StrEnum):
    """The anonymous seams a table reports (the fence hooks' first argument)."""

    TRUETIME_WAIT = "truetime_wait"  # inside the TrueTime wait of a generated time
    AFTER_CHECKS = "after_checks"  # a commit's OCC and key checks passed
    BEFORE_WRITE = "before_write"  # of a timeline file, a claim or the generation record
    AFTER_WRITE = "after_write"  # of a fenced timeline write
    BEFORE_DELETE = "before_delete"  # of a fenced delete


_current: ContextVar[Operation | None] = ContextVar("table_operation", default=None)

P = ParamSpec("P")
R = TypeVar("R")


def current_operation() -> Operation | None:
    """The operation running in this thread (None: outside every table operation)."""
    return _current.get()


def runs(op: Operation) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate an entry point of `op`: its seams (and its callees') name `op`."""

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            token = _current.set(op)
            try:
                return fn(*args, **kwargs)
            finally:
                _current.reset(token)

        return run

    return decorate
