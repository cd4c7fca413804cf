"""Fault entries (`faults[]`), a union discriminated by `kind`.

Each kind carries only the keys DESIGN.md gives it. Targets name processes as
`writer:N`, `batch_writer:N`, `worker:N` (N counts from 0), `coordinator`, `all` or
`random`; whether N exists is checked against the rest of the scenario in `rules.py`.
"""

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, model_validator

from harness.scenario.base import (
    MAX_LATENCY_MS,
    Count,
    DriftPpm,
    PosSeconds,
    Seconds,
    SkewMs,
    Strict,
)

_FORM_PATTERNS = {
    "writer:N": r"writer:\d+",
    "batch_writer:N": r"batch_writer:\d+",
    "worker:N": r"worker:\d+",
    "coordinator": "coordinator",
    "all": "all",
    "random": "random",
}


def _target(*forms: str) -> object:
    """A `target` string type that accepts only the given forms, with an error that lists them."""
    pattern = re.compile("|".join(f"(?:{_FORM_PATTERNS[f]})" for f in forms))

    def check(value: str) -> str:
        if not pattern.fullmatch(value):
            raise ValueError(f"{value!r} is not a valid target; allowed: {' | '.join(forms)}")
        return value

    return Annotated[str, AfterValidator(check)]


WriterTarget = _target("writer:N", "random")
WorkerTarget = _target("worker:N", "random")
SkewTarget = _target("coordinator", "writer:N", "batch_writer:N", "worker:N", "all")


class _Fault(Strict):
    at_s: Seconds
    seed: int | None = None

    @property
    def span_s(self) -> float:
        """How long one occurrence lasts; 0 for instantaneous faults."""
        return getattr(self, "duration_s", None) or 0.0


class _Repeating(_Fault):
    """`count` occurrences `every_s` apart (count None: once, or until the run ends)."""

    every_s: PosSeconds | None = None
    count: Count | None = None


class WriterCrash(_Repeating):
    kind: Literal["writer_crash"]
    target: WriterTarget = "random"
    point: Literal["before_flush", "mid_flush", "after_flush_before_event", "after_event"] = (
        "mid_flush"
    )


CoordinatorPoint = Literal[
    "after_coordinator_snapshot", "after_ack_before_commit", "mid_commit", "after_commit"
]


class CoordinatorCrash(_Repeating):
    kind: Literal["coordinator_crash"]
    target: Literal["coordinator"] = "coordinator"
    point: CoordinatorPoint = "after_ack_before_commit"


class CoordinatorPause(_Fault):
    """At at_s, or with `point` when the coordinator next reaches that seam (mid_commit:
    holding the table lock, right before the completed instant is written)."""

    kind: Literal["coordinator_pause"]
    target: Literal["coordinator"] = "coordinator"
    duration_s: PosSeconds = 10
    point: CoordinatorPoint | None = None


class _Counted(_Fault):
    """`count` is how many ACKs / operations / files are hit; `every_s` repeats that."""

    count: Count = 1
    every_s: PosSeconds | None = None


class _AckFault(_Counted):
    target: Literal["coordinator"] = "coordinator"


class DropAck(_AckFault):
    kind: Literal["drop_ack"]


class DelayAck(_AckFault):
    kind: Literal["delay_ack"]
    delay_s: PosSeconds


class StaleAck(_AckFault):
    kind: Literal["stale_ack"]


class ClockSkew(_Fault):
    """Exactly one of offset_ms, drift_ppm, jump_ms; duration_s None = until the run ends.
    `worker:N` skews a whole cluster worker process tree with libfaketime (standalone and
    docker backends; offset_ms or jump_ms); every other target is an engine clock."""

    kind: Literal["clock_skew"]
    target: SkewTarget = "coordinator"
    duration_s: PosSeconds | None = None
    offset_ms: SkewMs | None = None
    drift_ppm: DriftPpm | None = None
    jump_ms: SkewMs | None = None

    @model_validator(mode="after")
    def _exactly_one_skew(self) -> "ClockSkew":
        given = [k for k in ("offset_ms", "drift_ppm", "jump_ms") if getattr(self, k) is not None]
        if len(given) != 1:
            got = ", ".join(given) or "none"
            raise ValueError(f"needs exactly one of offset_ms, drift_ppm, jump_ms; got {got}")
        return self


class StorageLatency(_Fault):
    kind: Literal["storage_latency"]
    latency_ms: Annotated[float, Field(gt=0, le=MAX_LATENCY_MS)]
    ops: list[Literal["get", "put", "list", "rename", "delete"]] | None = None  # None: all ops
    duration_s: PosSeconds | None = None


class StorageError(_Counted):
    kind: Literal["storage_error"]
    op: Literal["put", "rename", "delete"]


class TornFile(_Counted):
    kind: Literal["torn_file"]
    target: WriterTarget = "random"


class WorkerKill(_Repeating):
    kind: Literal["worker_kill"]
    target: WorkerTarget = "random"


class WorkerPause(_Fault):
    kind: Literal["worker_pause"]
    target: WorkerTarget = "random"
    duration_s: PosSeconds = 10


Fault = Annotated[
    WriterCrash
    | CoordinatorCrash
    | CoordinatorPause
    | DropAck
    | DelayAck
    | StaleAck
    | ClockSkew
    | StorageLatency
    | StorageError
    | TornFile
    | WorkerKill
    | WorkerPause,
    Field(discriminator="kind"),
]

# Faults that act on cluster worker processes, which only exist outside local mode.
CLUSTER_BACKENDS = ("standalone", "docker")
CLUSTER_FAULTS = {"worker_kill": CLUSTER_BACKENDS, "worker_pause": CLUSTER_BACKENDS}


def is_worker_skew(kind: str, target: str | None) -> bool:
    """A process-level clock skew of a cluster worker (libfaketime), not an engine clock."""
    return kind == "clock_skew" and (target or "").startswith("worker:")
