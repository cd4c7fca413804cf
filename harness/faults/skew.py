"""Clock skew inside the engine's clocks: offset, drift or jump, for a time window."""

from __future__ import annotations

import threading
import time

from engine.clock import AdjustableClock
from harness.faults.evidence import record_fault
from harness.faults.fired import FiredLog
from harness.faults.schedule import Occurrence
from harness.history import HistoryWriter
from harness.run_clock import RunClock


class SkewApplier(threading.Thread):
    """Applies each skew occurrence to the clocks it targets when it starts, resets them
    when it ends; records the skew and the clock readings as evidence."""

    def __init__(
        self,
        occurrences: list[Occurrence],
        clocks: dict[str, AdjustableClock],
        clock: RunClock,
        history: HistoryWriter,
    ) -> None:
        super().__init__(name="clock-skew", daemon=True)
        self.pending = sorted(occurrences, key=lambda o: o.at_s)
        self.clocks = clocks
        self.clock = clock
        self.history = history
        self.active: list[Occurrence] = []
        self._stop = threading.Event()

    def _targets(self, o: Occurrence) -> dict[str, AdjustableClock]:
        if o.target == "all":
            return self.clocks
        return {o.target: self.clocks[o.target]} if o.target in self.clocks else {}

    def _apply(self, o: Occurrence) -> None:
        for name, clock in self._targets(o).items():
            before = clock.now_ms()
            if o.params.get("offset_ms") is not None:
                clock.set_offset_ms(float(o.params["offset_ms"]))
            elif o.params.get("drift_ppm") is not None:
                clock.set_drift_ppm(float(o.params["drift_ppm"]))
            else:
                clock.jump_ms(float(o.params["jump_ms"]))
            skew = {
                k: o.params[k]
                for k in ("offset_ms", "drift_ppm", "jump_ms")
                if o.params.get(k) is not None
            }
            record_fault(
                self.history,
                o,
                self.clock.elapsed(),
                target=name,
                clock_before_ms=before,
                clock_after_ms=clock.now_ms(),
                wall_ms=int(time.time() * 1000),
                **skew,
            )

    def _reset(self, o: Occurrence) -> None:
        for clock in self._targets(o).values():
            clock.reset()

    def run(self) -> None:
        while not self._stop.wait(0.05):
            now = self.clock.elapsed()
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
        self._stop.set()


def skew_at_ms(o: Occurrence, elapsed_s: float) -> float:
    """The clock offset an occurrence gives `elapsed_s` into the run (0 outside its window)."""
    if not o.at_s <= elapsed_s < o.end_s:
        return 0.0
    if o.params.get("drift_ppm") is not None:
        return float(o.params["drift_ppm"]) * (elapsed_s - o.at_s) * 1000 / 1e6
    return float(o.params.get("offset_ms") or o.params.get("jump_ms") or 0.0)


def targets_writer(o: Occurrence, task: int) -> bool:
    return o.kind == "clock_skew" and o.target in (f"writer:{task}", "all")


def skew_task_clock(
    occurrences: list[Occurrence],
    clock: AdjustableClock,
    task: int,
    run_clock: RunClock,
    history: HistoryWriter,
    fired: FiredLog,
) -> None:
    """A writer task's engine clock for this task's lifetime (tasks live one micro-batch):
    the skews active now; each occurrence's evidence is recorded once per writer."""
    elapsed = run_clock.elapsed()
    active = [o for o in occurrences if targets_writer(o, task) and skew_at_ms(o, elapsed)]
    clock.set_offset_ms(sum(skew_at_ms(o, elapsed) for o in active))
    for o in active:
        target = f"writer:{task}"
        if fired.mark(f"{o.label}.{target}"):
            record_fault(
                history,
                o,
                elapsed,
                target=target,
                clock_skew_ms=clock.skew_ms,
                clock_ms=clock.now_ms(),
                wall_ms=int(time.time() * 1000),
            )
