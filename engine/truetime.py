"""TrueTime-style instant time generation (Hudi's WAIT_TO_ADJUST_SKEW generator).

lock -> read clock -> (strict: raise above everything already generated or on the
timeline) -> number it in the table's generation sequence -> wait until max_skew_ms have
passed since the clock was read -> unlock. The wait makes any later generation, on any
machine whose clock is within the skew bound, read a larger clock value; strict
monotonicity covers the equality case at ms granularity and clocks beyond the bound.
The wait counts from the clock reading, so the store round trip (the sequence record,
written before anything can use the number) runs inside it instead of before it: on slow
storage that is one operation less per lock hold.

The generation sequence: every generated time (requested or completion, any process)
gets the next number of one counter kept in the shared store beside the last time, read
and written under the table lock in the same record (no extra storage operation when
strict, whose store round trip this is). No clock reading feeds the counter, so a skewed,
drifting or jumping clock cannot reorder it, and it survives crashes. The instant files
record each time's number, so a checker can judge "every time is greater than every time
generated before it" in the true order of generation.

Shared wait (opt-in, `generate_pair`): one clock reading, two times t < t + 1 ms with
consecutive sequence numbers, one record write and one wait of max_skew_ms + 1 ms (the
wait that t + 1 needs, which covers t too). A commit uses it to mint its completion time
and the next instant's requested time under one lock hold (Table.commit_and_start):
both are greater than everything generated before, and the second greater than the first,
exactly as two holds one after the other would make them, minus one wait.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from engine.clock import Clock, format_instant, parse_instant
from engine.locks.base import LockProvider


@dataclass(frozen=True)
class InstantTiming:
    """Where the time went while generating one instant time (for the harness history)."""

    lock_wait_ms: float
    truetime_sleep_ms: float


@dataclass(frozen=True)
class LastGenerated:
    """The shared store's record: the largest generated time and the last sequence number
    (None in a store written before sequences existed)."""

    time: str
    seq: int | None


@dataclass(frozen=True)
class Generated:
    """A generated time and its number in the table's generation sequence (None without a
    shared store: then nothing orders it against other processes' times)."""

    time: str
    seq: int | None
    timing: InstantTiming


class LastTimeStore(Protocol):
    """Shares the last generation between processes (read and written under the lock).
    `load` raises if the record is unreadable: a lost count cannot be guessed."""

    def load(self) -> LastGenerated | None: ...

    def save(self, last: LastGenerated) -> None: ...


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
        self._last_seq = 0
        self._mutex = threading.Lock()
        self.last_timing = InstantTiming(0.0, 0.0)

    def generate(self, *, locked: bool = False) -> str:
        return self.generate_stamped(locked=locked).time

    def generate_stamped(self, *, locked: bool = False) -> Generated:
        """A new instant time, its sequence number and its timing. `locked=True`: the
        caller already holds `lock`."""
        return self._generate(1, locked)[0]

    def generate_pair(self, *, locked: bool = False) -> tuple[Generated, Generated]:
        """Two times, the second 1 ms after the first, numbered one after the other, for
        one wait (see the module doc: shared wait). Both carry the pair's timing."""
        first, second = self._generate(2, locked)
        return first, second

    def _generate(self, count: int, locked: bool) -> list[Generated]:
        t0 = time.perf_counter()
        if not locked:
            self.lock.acquire()
        try:
            t1 = time.perf_counter()
            with self._mutex:  # threads of one process sharing this generator
                ms, seq, read_at = self._next(count)
            if self.wait and self.max_skew_ms > 0:
                # The last time minted is ms + count - 1: wait its bound out from the read.
                bound_s = (self.max_skew_ms + count - 1) / 1000
                self._sleep(max(bound_s - (time.perf_counter() - read_at), 0.0))
            t2 = time.perf_counter()
        finally:
            if not locked:
                self.lock.release()
        timing = InstantTiming((t1 - t0) * 1000, (t2 - t1) * 1000)
        self.last_timing = timing
        return [
            Generated(format_instant(ms + i), None if seq is None else seq + i, timing)
            for i in range(count)
        ]

    def _next(self, count: int = 1) -> tuple[int, int | None, float]:
        """(first time, its sequence number, perf_counter right after the clock was read);
        `count` consecutive times and numbers are taken."""
        ms = self.clock.now_ms()
        read_at = time.perf_counter()
        # Read even when not strict: the sequence must count every generation.
        last = self._store.load() if self._store is not None else None
        stored_ms = parse_instant(last.time) if last is not None else None
        if self.strict_monotonic:
            bounds = [self._last_ms, stored_ms]
            if self._floor is not None:
                floor = self._floor()
                bounds.append(parse_instant(floor) if floor else None)
            ms = max([ms] + [b + 1 for b in bounds if b is not None])
        top_ms = ms + count - 1
        seq = None
        if self._store is not None:
            # This process's own count too: a store that was reset must not reuse numbers
            # this process already handed out.
            stored_seq = (last.seq or 0) if last is not None else 0
            seq = max(stored_seq, self._last_seq) + 1
            # The record keeps the largest time (not strict: this one may be smaller).
            top = top_ms if stored_ms is None else max(top_ms, stored_ms)
            self._store.save(LastGenerated(format_instant(top), seq + count - 1))
            self._last_seq = seq + count - 1
        self._last_ms = top_ms if self._last_ms is None else max(top_ms, self._last_ms)
        return ms, seq, read_at
