"""TrueTime-style instant time generation (Hudi's WAIT_TO_ADJUST_SKEW generator).

lock -> read clock -> (strict: raise above everything already generated or on the
timeline) -> sleep max_skew_ms -> unlock. The sleep makes any later generation, on any
machine whose clock is within the skew bound, read a larger clock value; strict
monotonicity covers the equality case at ms granularity and clocks beyond the bound.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from engine.clock import Clock, format_instant, parse_instant
from engine.lock import LockProvider


@dataclass(frozen=True)
class InstantTiming:
    """Where the time went while generating one instant time (for the harness history)."""

    lock_wait_ms: float
    truetime_sleep_ms: float


class LastTimeStore(Protocol):
    """Shares the last generated time between processes (read and written under the lock)."""

    def load(self) -> str | None: ...

    def save(self, instant_time: str) -> None: ...


class InstantTimeGenerator:
    def __init__(
        self,
        clock: Clock,
        lock: LockProvider,
        max_skew_ms: int,
        strict_monotonic: bool = True,
        wait: bool = True,
        floor: Callable[[], str | None] | None = None,
        store: LastTimeStore | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.clock, self.lock, self.max_skew_ms = clock, lock, max_skew_ms
        self.strict_monotonic, self.wait = strict_monotonic, wait
        self._floor, self._store, self._sleep = floor, store, sleep
        self._last_ms: int | None = None
        self._mutex = threading.Lock()
        self.last_timing = InstantTiming(0.0, 0.0)

    def generate(self, *, locked: bool = False) -> str:
        return self.generate_timed(locked=locked)[0]

    def generate_timed(self, *, locked: bool = False) -> tuple[str, InstantTiming]:
        """A new instant time and its timing. `locked=True`: the caller already holds `lock`."""
        t0 = time.perf_counter()
        if not locked:
            self.lock.acquire()
        try:
            t1 = time.perf_counter()
            with self._mutex:  # threads of one process sharing this generator
                ms = self._next_ms()
            if self.wait and self.max_skew_ms > 0:
                self._sleep(self.max_skew_ms / 1000)
            t2 = time.perf_counter()
        finally:
            if not locked:
                self.lock.release()
        timing = InstantTiming((t1 - t0) * 1000, (t2 - t1) * 1000)
        self.last_timing = timing
        return format_instant(ms), timing

    def _next_ms(self) -> int:
        ms = self.clock.now_ms()
        if self.strict_monotonic:
            bounds = [self._last_ms]
            if self._store is not None:
                stored = self._store.load()
                bounds.append(parse_instant(stored) if stored else None)
            if self._floor is not None:
                floor = self._floor()
                bounds.append(parse_instant(floor) if floor else None)
            ms = max([ms] + [b + 1 for b in bounds if b is not None])
            if self._store is not None:
                self._store.save(format_instant(ms))
        self._last_ms = ms if self._last_ms is None else max(ms, self._last_ms)
        return ms
