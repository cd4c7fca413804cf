"""A fault occurrence built by hand, as the schedule builds one (harness/faults/schedule.py):
its entry is validated into the kind's typed model."""

from typing import Any

from harness.faults.schedule import Occurrence, parse_fault


def occurrence(
    kind: str,
    index: int,
    at_s: float,
    end_s: float,
    target: str | None = None,
    params: dict[str, Any] | None = None,
) -> Occurrence[Any]:
    entry = {"kind": kind, "at_s": at_s, **(params or {})}
    if target is not None:
        entry["target"] = target
    return Occurrence(parse_fault(entry), index, at_s, end_s)
