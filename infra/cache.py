"""The machine's cache of instantbench (JVM archives, Spark runtimes, docker image locks,
measured ceilings): $XDG_CACHE_HOME/instantbench, ~/.cache/instantbench by default. Never in
the repository, and shared by every checkout on the machine."""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "instantbench"


@contextmanager
def exclusive(lock_path: Path) -> Iterator[None]:
    """An exclusive fcntl lock on `lock_path`, released when the block ends (or the holder
    dies: the kernel drops a dead process's locks, so a crash cannot wedge the cache)."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
