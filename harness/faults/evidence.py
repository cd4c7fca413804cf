"""Every applied fault becomes one `fault` event (docs/history.md) with its evidence."""

from __future__ import annotations

from typing import Any

from harness.faults.fired import FiredLog
from harness.faults.schedule import Occurrence
from harness.history import HistoryWriter
from harness.run_clock import RunClock


def record_fault(
    history: HistoryWriter,
    occurrence: Occurrence[Any],
    start_s: float,
    target: str | None = None,
    **evidence: Any,
) -> None:
    """`target` overrides the occurrence's (a skew of `all` names each clock it moved)."""
    if occurrence.point_drawn:  # say which point was drawn, and that it was
        evidence = {"point": getattr(occurrence.fault, "point", None), **evidence}
        evidence["point_from"] = "random"
    history.record(
        "fault",
        fault_kind=occurrence.kind,
        label=occurrence.label,
        target=target or occurrence.target,
        start_s=round(start_s, 3),
        end_s=round(max(occurrence.end_s, start_s), 3),
        applied=True,
        evidence=evidence,
    )


class FaultRecorder:
    """What a process that applies faults holds: the run clock, the history its `fault`
    events go to, and the run's fired log (hits are counted across every process)."""

    def __init__(self, clock: RunClock, history: HistoryWriter, fired: FiredLog) -> None:
        self.clock, self.history, self.fired = clock, history, fired

    def _record(self, o: Occurrence[Any], **evidence: Any) -> None:
        """Record `o` as applied now, with its evidence."""
        record_fault(self.history, o, self.clock.elapsed(), **evidence)
