"""Expand the scenario's `faults` into concrete occurrences with resolved targets and times.

An occurrence carries its fault entry, the scenario's typed model (harness/scenario/faults.py)
with `target` and `point` resolved, so scheduling, the processes that apply it and its
evidence read one set of keys and defaults. It crosses to the driver and the executors as
JSON (`to_dict`) and is validated again on the way in (`from_dict`).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import TypeAdapter

from harness.faults.kinds import LASTING_KINDS, WORKER_KINDS, FaultKind
from harness.faults.seams import draw_point
from harness.scenario.faults import AnyFault, Fault

F = TypeVar("F", bound=AnyFault)


@dataclass(frozen=True)
class Occurrence(Generic[F]):
    fault: F  # the scenario's entry, its target and point resolved
    index: int  # which fault entry of the scenario
    at_s: float  # seconds after run start
    end_s: float  # = at_s for an instantaneous fault
    point_drawn: bool = False  # `point: random`, drawn for this occurrence

    @property
    def kind(self) -> FaultKind:
        return FaultKind(self.fault.kind)

    @property
    def target(self) -> str | None:
        """The process it hits (never `random`); None: the whole table's storage."""
        target: str | None = getattr(self.fault, "target", None)
        return target

    @property
    def label(self) -> str:
        where = f"@{self.target}" if self.target else ""
        return f"{self.kind}{where}#{self.index}"

    def active(self, elapsed_s: float) -> bool:
        """In its window; an instantaneous fault marks the second it happens in."""
        return self.at_s <= elapsed_s < max(self.end_s, self.at_s + 1.0)

    def to_dict(self) -> dict[str, Any]:
        return {
            "fault": self.fault.model_dump(mode="json"),
            "index": self.index,
            "at_s": self.at_s,
            "end_s": self.end_s,
            "point_drawn": self.point_drawn,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Occurrence[Any]:
        return Occurrence(
            parse_fault(data["fault"]), **{k: v for k, v in data.items() if k != "fault"}
        )


@functools.cache
def _faults() -> TypeAdapter[AnyFault]:
    return TypeAdapter(Fault)


def parse_fault(entry: dict[str, Any]) -> AnyFault:
    """A fault entry (the scenario's form, or an occurrence's JSON) as its typed model."""
    return _faults().validate_python(entry)


def of_kind(occurrences: Iterable[Occurrence[Any]], model: type[F]) -> list[Occurrence[F]]:
    """The occurrences of one kind, typed by its model."""
    return [o for o in occurrences if isinstance(o.fault, model)]


def _resolve_target(fault: AnyFault, rng: random.Random, writers: int, workers: int) -> AnyFault:
    """`random`: a writer task (numbered from 0, as Spark's partitions) or, for worker
    faults, a cluster worker (numbered from 1, as infra.cluster's workers)."""
    if getattr(fault, "target", None) != "random":
        return fault
    if fault.kind in WORKER_KINDS:
        return fault.model_copy(update={"target": f"worker:{1 + rng.randrange(workers)}"})
    return fault.model_copy(update={"target": f"writer:{rng.randrange(writers)}"})


def _resolve_point(fault: AnyFault, rng: random.Random, shared_wait: bool) -> AnyFault:
    """`point: random` (a pause): one seam per occurrence, drawn with the seed."""
    if getattr(fault, "point", None) != "random":
        return fault
    point = draw_point(fault.kind, rng.randrange(2**32), shared_wait)
    return fault.model_copy(update={"point": point})


def expand(
    faults: Iterable[AnyFault],
    seed: int,
    run_s: float,
    writers: int,
    workers: int,
    shared_wait: bool = False,
) -> list[Occurrence[Any]]:
    """One occurrence per repetition; `random` targets drawn with the scenario (or fault) seed."""
    out: list[Occurrence[Any]] = []
    for index, fault in enumerate(faults):
        rng = random.Random(fault.seed if fault.seed is not None else seed + index)
        every = fault.every
        repeats = fault.occurrences or (int((run_s - fault.at_s) // every) + 1 if every else 1)
        lasting = fault.kind in LASTING_KINDS
        for n in range(repeats):
            at = fault.at_s + n * (every or 0)
            if at >= run_s:
                break
            end = min(at + (fault.span_s or (run_s - at if lasting else 0)), run_s)
            resolved = _resolve_target(fault, rng, writers, workers)
            drawn = _resolve_point(resolved, rng, shared_wait)
            out.append(Occurrence(drawn, index, at, end, point_drawn=drawn is not resolved))
    return sorted(out, key=lambda o: o.at_s)
