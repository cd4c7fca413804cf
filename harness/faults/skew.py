"""Clock skew inside the engine's clocks: offset, drift or jump, for a time window.

A skew counts as applied only once a reader got the skewed value: each skewed clock
reports its first read after the skew was set (engine.clock.SkewedRead), and the fault is
recorded then, with the value read. A clock nobody reads in the window leaves no record,
and the run's analysis reports that fault as never applied.
"""

from __future__ import annotations

import functools
import threading
import time
from typing import Any

from engine.clock import AdjustableClock, SkewedRead
from harness.faults.evidence import record_fault
from harness.faults.schedule import Occurrence
from harness.history import HistoryWriter
from harness.run_clock import RunClock
from harness.scenario.faults import ClockSkew


def read_evidence(read: SkewedRead, read_s: float) -> dict[str, Any]:
    """What the reader got: its value, the true time and the skew between them."""
    return {
        "read_ms": read.read_ms,
        "true_ms": read.base_ms,
        "skew_read_ms": read.skew_ms,
        "read_s": round(read_s, 3),
        "reader": read.reader,
        "wall_ms": int(time.time() * 1000),
    }


class SkewApplier(threading.Thread):
    """Applies each skew occurrence to the clocks it targets when it starts and resets
    them when it ends; records the fault when a skewed clock is first read."""

    def __init__(
        self,
        occurrences: list[Occurrence[ClockSkew]],
        clocks: dict[str, AdjustableClock],
        clock: RunClock,
        history: HistoryWriter,
    ) -> None:
        super().__init__(name="clock-skew", daemon=True)
        self.pending = sorted(occurrences, key=lambda o: o.at_s)
        self.clocks = clocks
        self.clock = clock
        self.history = history
        self.active: list[Occurrence[ClockSkew]] = []
        self._stop = threading.Event()
        # clock name -> [(adjustment, occurrence, elapsed when set)] not read yet. The
        # mutex spans setting a skew and noting it, so a read cannot fall in between.
        self._unread: dict[str, list[tuple[int, Occurrence[ClockSkew], float]]] = {}
        self._mutex = threading.Lock()
        for name, c in clocks.items():
            c.on_skewed_read = functools.partial(self._on_read, name)

    def _targets(self, o: Occurrence[ClockSkew]) -> dict[str, AdjustableClock]:
        target = o.fault.target
        if target == "all":
            return self.clocks
        return {target: self.clocks[target]} if target in self.clocks else {}

    def _apply(self, o: Occurrence[ClockSkew]) -> None:
        ((key, value),) = o.fault.skew.items()  # exactly one (ClockSkew's rule)
        for name, clock in self._targets(o).items():
            setters = {
                "offset_ms": clock.set_offset_ms,
                "drift_ppm": clock.set_drift_ppm,
                "jump_ms": clock.jump_ms,
            }
            with self._mutex:
                adjustment = setters[key](value)
                self._unread.setdefault(name, []).append((adjustment, o, self.clock.elapsed()))

    def _on_read(self, name: str, read: SkewedRead) -> None:
        """Called by the reader's thread with the first value it read after a skew."""
        with self._mutex:
            if self._stop.is_set():
                return  # the run is over: a late read is no evidence for it
            waiting = self._unread.get(name, [])
            hits = [w for w in waiting if w[0] <= read.adjustment]
            self._unread[name] = [w for w in waiting if w[0] > read.adjustment]
        read_s = self.clock.elapsed()
        for _, o, set_s in hits:
            record_fault(
                self.history,
                o,
                set_s,
                target=name,
                **o.fault.skew,
                **read_evidence(read, read_s),
            )

    def _reset(self, o: Occurrence[ClockSkew]) -> None:
        with self._mutex:
            for name, clock in self._targets(o).items():
                clock.reset()
                self._unread[name] = [w for w in self._unread.get(name, []) if w[1] != o]

    def run(self) -> None:
        while not self._stop.wait(0.05):
            self.step(self.clock.elapsed())

    def step(self, now: float) -> None:
        """Start the skews due at `now` and end the ones whose window is over."""
        for o in [o for o in self.pending if o.at_s <= now]:
            self.pending.remove(o)
            if o.end_s <= now:
                continue  # already over (a restarted driver)
            self._apply(o)
            self.active.append(o)
        for o in [o for o in self.active if o.end_s <= now]:
            self.active.remove(o)
            self._reset(o)

    def stop(self) -> None:
        with self._mutex:
            self._stop.set()
