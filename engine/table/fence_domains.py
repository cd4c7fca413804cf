"""Where fencing lives on storage and which domain a lock hold's grant goes to
(engine/table/fencing.py argues the design): the fence directory and its claims, the
writers' domain `w`, and the coordinator epochs' `e<epoch>`, one of which the calling
thread's table operations may be scoped to."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from contextvars import ContextVar

from engine.storage import Storage

FENCE_DIR = ".hoodie/.fence"
CLAIMS_DIR = f"{FENCE_DIR}/claims"
WRITERS_DOMAIN = "w"
_EPOCH_RE = re.compile(r"^e(\d+)$")

# The domain of the calling thread's table operations (a coordinator's epoch); a Table
# shared by two coordinators (in tests) still fences each by its own epoch.
_scope: ContextVar[str | None] = ContextVar("fence_domain", default=None)


def epoch_domain(epoch: int) -> str:
    return f"e{epoch}"


def epoch_of(domain: str) -> int | None:
    """The coordinator epoch a domain directory's name stands for (None: not an epoch's)."""
    m = _EPOCH_RE.match(domain)
    return int(m.group(1)) if m else None


@contextlib.contextmanager
def epoch_scope(epoch: int) -> Iterator[None]:
    """Table operations inside this block are fenced by coordinator epoch `epoch`."""
    token = _scope.set(epoch_domain(epoch))
    try:
        yield
    finally:
        _scope.reset(token)


def scoped_domain() -> str | None:
    """The domain `epoch_scope` set for the calling thread (None outside every scope)."""
    return _scope.get()


def current_epoch(storage: Storage) -> int:
    """The newest coordinator epoch (-1 before any)."""
    epochs = [e for n in storage.list(FENCE_DIR) if (e := epoch_of(n)) is not None]
    return max(epochs, default=-1)
