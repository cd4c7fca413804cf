"""Expand the scenario's `faults` into concrete occurrences with resolved targets and times."""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field
from typing import Any

from harness.faults.kinds import COUNTED_KINDS, LASTING_KINDS, WORKER_KINDS
from harness.faults.seams import draw_point


@dataclass(frozen=True)
class Occurrence:
    kind: str
    index: int  # which fault entry of the scenario
    at_s: float  # seconds after run start
    end_s: float  # = at_s for an instantaneous fault
    target: str | None
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        where = f"@{self.target}" if self.target else ""
        return f"{self.kind}{where}#{self.index}"

    def active(self, elapsed_s: float) -> bool:
        """In its window; an instantaneous fault marks the second it happens in."""
        return self.at_s <= elapsed_s < max(self.end_s, self.at_s + 1.0)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Occurrence:
        return cls(**data)


def _resolve_target(
    kind: str, target: str | None, rng: random.Random, writers: int, workers: int
) -> str | None:
    """`random`: a writer task (numbered from 0, as Spark's partitions) or, for worker
    faults, a cluster worker (numbered from 1, as infra.cluster's workers)."""
    if target != "random":
        return target
    if kind in WORKER_KINDS:
        return f"worker:{1 + rng.randrange(workers)}"
    return f"writer:{rng.randrange(writers)}"


def _resolve_point(
    params: dict[str, Any], kind: str, rng: random.Random, shared_wait: bool
) -> dict[str, Any]:
    """`point: random` (a pause): one seam per occurrence, drawn with the seed; the
    evidence says it was drawn (`point_from: random`)."""
    if params.get("point") != "random":
        return params
    point = draw_point(kind, rng.randrange(2**32), shared_wait)
    return {**params, "point": point, "point_from": "random"}


def expand(
    faults: list[dict[str, Any]],
    seed: int,
    run_s: float,
    writers: int,
    workers: int,
    shared_wait: bool = False,
) -> list[Occurrence]:
    """One occurrence per repetition; `random` targets drawn with the scenario (or fault) seed."""
    out: list[Occurrence] = []
    for index, fault in enumerate(faults):
        rng = random.Random(fault.get("seed") if fault.get("seed") is not None else seed + index)
        every = fault.get("every_s")
        count = None if fault["kind"] in COUNTED_KINDS else fault.get("count")
        repeats = count or (int((run_s - fault["at_s"]) // every) + 1 if every else 1)
        params = {k: v for k, v in fault.items() if k not in ("kind", "at_s", "target", "seed")}
        for n in range(repeats):
            at = fault["at_s"] + n * (every or 0)
            if at >= run_s:
                break
            span = fault.get("duration_s") or (run_s - at if fault["kind"] in LASTING_KINDS else 0)
            end = min(at + span, run_s)
            target = _resolve_target(fault["kind"], fault.get("target"), rng, writers, workers)
            out.append(
                Occurrence(
                    fault["kind"],
                    index,
                    at,
                    end,
                    target,
                    _resolve_point(params, fault["kind"], rng, shared_wait),
                )
            )
    return sorted(out, key=lambda o: o.at_s)
