"""The run's time origin t0: fixed when Spark first asks the source for data.

Every process that schedules faults or writes times relative to the run reads it from the
same file, so 'at_s: 20' means the same moment for the runner, the driver and executors.
"""

from __future__ import annotations

import os
import time
from pathlib import Path


class RunClock:
    def __init__(self, t0_file: str | Path | None = None, t0: float | None = None) -> None:
        self.t0_file = Path(t0_file) if t0_file else None
        self._t0 = t0

    @property
    def t0(self) -> float | None:
        if self._t0 is None and self.t0_file is not None and self.t0_file.exists():
            self._t0 = float(self.t0_file.read_text())
        return self._t0

    def elapsed(self) -> float:
        """Seconds since t0; -inf before the run's clock has started."""
        t0 = self.t0
        return float("-inf") if t0 is None else time.time() - t0

    def start(self) -> float:
        """Fix t0 now unless a (restarted) query fixed it before; return it."""
        t0 = self.t0
        if t0 is not None:
            return t0
        assert self.t0_file is not None
        tmp = self.t0_file.with_name(f".{self.t0_file.name}.{os.getpid()}")
        tmp.write_text(repr(time.time()))
        try:
            os.link(tmp, self.t0_file)  # atomic: the first writer wins
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
        t0 = self.t0
        assert t0 is not None  # the file exists now, ours or the first writer's
        return t0
