"""Every applied fault becomes one `fault` event (docs/history.md) with its evidence."""

from __future__ import annotations

from typing import Any

from harness.faults.schedule import Occurrence
from harness.history import HistoryWriter


def record_fault(
    history: HistoryWriter,
    occurrence: Occurrence,
    start_s: float,
    target: str | None = None,
    **evidence: Any,
) -> None:
    """`target` overrides the occurrence's (a skew of `all` names each clock it moved)."""
    if occurrence.params.get("point_from"):  # a drawn point: say which, and that it was
        evidence = {"point": occurrence.params["point"], **evidence}
        evidence["point_from"] = occurrence.params["point_from"]
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
