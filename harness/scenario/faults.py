"""Fault entries (`faults[]`), a union discriminated by `kind`.

Each kind carries only the keys DESIGN.md gives it. Targets name processes as
`writer:N`, `batch_writer:N` (N counts from 0), `worker:N` (from 1, like the workers'
loopback addresses), `coordinator`, `all` or `random`; whether N exists is checked
against the rest of the scenario in `rules.py`.
"""

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field, model_validator

from engine.table.fault_points import FaultPoint
from harness.scenario.base import (
    MAX_LATENCY_MS,
    Count,
    DriftPpm,
    PosSeconds,
    SkewMs,
)
from harness.scenario.fault_base import FaultBase, RepeatingFault, TargetForms
from harness.scenario.network_faults import NETWORK_KINDS, LinkLatency, PacketLoss, Partition
from harness.scenario.points import CoordinatorPoint

WriterTarget = Annotated[str, TargetForms(("writer:N", "random"))]
WorkerTarget = Annotated[str, TargetForms(("worker:N", "random"))]
BatchWriterTarget = Annotated[str, TargetForms(("batch_writer:N",))]
# Only clocks the engine reads: a writer task never reads one, and writer tasks are all the
# engine runs on a cluster worker (the coordinator lives in the driver, beside the runner).
_SKEW_FORMS = TargetForms(
    ("coordinator", "batch_writer:N", "all"),
    why="writer:N and worker:N: no clock there is read for instant times or heartbeats; "
    "writer tasks, the only engine code on a cluster worker, never read one",
)
SkewTarget = Annotated[str, _SKEW_FORMS]
_SKEW_KEYS = ("offset_ms", "drift_ppm", "jump_ms")


class WriterCrash(RepeatingFault):
    kind: Literal["writer_crash"]
    """A hard exit of a writer task's Python worker at a seam; Spark retries the task."""
    target: WriterTarget = "random"
    """The writer task (writer:N, N from 0) or random (drawn with the seed)."""
    point: Literal["before_flush", "mid_flush", "after_flush_before_event", "after_event"] = (
        "mid_flush"
    )
    """Where in the writer's flush it exits."""


# A crash can also hit the driver between Spark's commit log and the ACK (the driver's
# AckWatcher, harness/pipeline/acks.py): only Spark's checkpoint knows that batch then.
# mid_retry (Hudi): the harness fails a batch inside Hudi's sink (every attempt of one of
# its tasks dies), and the driver dies once the sink's retry of it requested its instant.
CrashPoint = Literal[CoordinatorPoint, "after_spark_commit_before_ack", "mid_retry"]
# The table's own seams, `<operation>_<seam>`, as the engine names them
# (engine/table/fault_points.py FaultPoint): inside the TrueTime wait of a generated time,
# right before its generation record (`.hoodie/.truetime`) or a timeline file (or a
# rollback's claim) is written, right before a fenced delete (a rollback's data files; a
# cleaner's planned files, after its plan's lock hold; archival's timeline files and merged
# runs), or (commit_after_checks) once OCC and the key check passed, before the completion
# time is generated (a coordinator's fencing check follows it). All but the cleaner's
# deletes are under the table lock. Generated from the enum, so a point the engine no longer
# has is refused by validate.
TABLE_POINTS: tuple[str, ...] = tuple(p.value for p in FaultPoint)
# With engine.truetime.shared_wait a commit's wait also mints the stream's next instant, so
# the coordinator waits in an instant creation of its own only for the first one.
SHARED_WAIT_UNREACHED = ("instant_before_truetime", "instant_truetime_wait")
# random: drawn per run from the fault's (or the scenario's) seed among the seams every run
# reaches (the coordinator's, instant creation's and commit's; harness/faults/seams.py).
# lock_held (Hudi): wherever it is when it is seen holding the table's ZooKeeper lock.
if TYPE_CHECKING:  # a Literal built at run time is only a string to a type checker
    TableSeam = str
    PausePoint = str
    BatchWriterPoint = str
else:
    TableSeam = Literal[TABLE_POINTS]
    PausePoint = Literal[CoordinatorPoint, TableSeam, "random"]
    BatchWriterPoint = Literal[TableSeam, "random", "lock_held"]


class CoordinatorCrash(RepeatingFault):
    kind: Literal["coordinator_crash"]
    """A SIGKILL of the pipeline driver at a commit seam; the query restarts from its checkpoint
    and the coordinator recovers its state."""
    target: Literal["coordinator"] = "coordinator"
    """Always the coordinator (in the driver)."""
    point: CrashPoint = "after_ack_before_commit"
    """The seam of the coordinator's commit where the driver dies, or
    after_spark_commit_before_ack: Spark has logged the batch's commit, the driver has not
    recorded the batch nor sent its ACK."""


class CoordinatorPause(FaultBase):
    """At at_s, or with `point` when the coordinator next reaches that seam (mid_commit:
    holding the table lock, right before the completed instant is written)."""

    kind: Literal["coordinator_pause"]
    """SIGSTOP the driver, start a successor that recovers, then SIGCONT the old one (a zombie
    coordinator that fencing must stop)."""
    target: Literal["coordinator"] = "coordinator"
    """Always the coordinator (in the driver)."""
    duration_s: PosSeconds = 10
    """At least how long the old driver stays stopped (it resumes once its successor
    committed)."""
    point: PausePoint | None = None
    """The seam where it stops (the first time the driver reaches it after at_s): a commit
    seam of the coordinator, a table seam of commit, instant creation, rollback,
    compaction, cleaning or archival, or random (drawn from the seed among the
    coordinator's, instant creation's and commit's seams); none: wherever it is at at_s."""


class BatchWriterPause(FaultBase):
    """At `point`, the first time the batch writer reaches it after at_s (holding the table
    lock), it stops: no storage operation, no lease renewal, until its lease ran out and
    another writer took the lock (and at least duration_s passed); then it goes on."""

    kind: Literal["batch_writer_pause"]
    """Stop a batch writer inside its critical section past its lock lease, then resume it
    (a stale lock holder that fencing must stop)."""
    target: BatchWriterTarget = "batch_writer:0"
    """The batch writer (batch_writer:N, N from 0)."""
    duration_s: PosSeconds = 15
    """At least how long it stays stopped (longer if its lease has not been taken over by
    then; at most duration_s + 30 s)."""
    point: BatchWriterPoint = "commit_before_completed"
    """The table seam where it stops, or random (drawn from the seed among instant
    creation's and commit's); on hudi lock_held: as soon as it is seen holding the
    ZooKeeper lock, from outside its JVM."""


class _Counted(FaultBase):
    """`count` is how many ACKs / operations / files are hit; `every_s` repeats that."""

    count: Count = 1
    """How many ACKs / operations / files one occurrence hits."""
    every_s: PosSeconds | None = None
    """Hit `count` more every N seconds; none: once."""

    @property
    def every(self) -> float | None:
        return self.every_s


class _AckFault(_Counted):
    target: Literal["coordinator"] = "coordinator"
    """Always the coordinator (the ACKs' receiver)."""


class DropAck(_AckFault):
    kind: Literal["drop_ack"]
    """Lose checkpoint ACKs on their way to the coordinator."""


class DelayAck(_AckFault):
    kind: Literal["delay_ack"]
    """Deliver checkpoint ACKs late."""
    delay_s: PosSeconds
    """How late (s)."""


class StaleAck(_AckFault):
    kind: Literal["stale_ack"]
    """Deliver an ACK, then replay it later (the replay must be a no-op)."""


class ClockSkew(FaultBase):
    """Exactly one of offset_ms, drift_ppm, jump_ms; duration_s None = until the run ends."""

    kind: Literal["clock_skew"]
    """Move an engine clock (instant times and heartbeats; lock leases run on monotonic
    clocks, which no skew moves)."""
    target: SkewTarget = "coordinator"
    """Whose clock: coordinator, batch_writer:N or all (both); writer:N and worker:N are
    refused (writer tasks, the only engine code on a cluster worker, never read a clock)."""
    duration_s: PosSeconds | None = None
    """How long the skew lasts; none: until the run ends."""
    offset_ms: SkewMs | None = None
    """A constant offset (ms, negative = behind)."""
    drift_ppm: DriftPpm | None = None
    """A drift (parts per million) from at_s on."""
    jump_ms: SkewMs | None = None
    """A one-time jump (ms)."""

    @property
    def skew(self) -> dict[str, float]:
        """The skew given, by its key (offset_ms, drift_ppm or jump_ms)."""
        return {k: v for k in _SKEW_KEYS if (v := getattr(self, k)) is not None}

    @model_validator(mode="after")
    def _exactly_one_skew(self) -> "ClockSkew":
        if len(self.skew) != 1:
            got = ", ".join(self.skew) or "none"
            raise ValueError(f"needs exactly one of offset_ms, drift_ppm, jump_ms; got {got}")
        return self


class StorageLatency(FaultBase):
    kind: Literal["storage_latency"]
    """Slow storage: every matching operation of the table's storage waits longer."""
    latency_ms: Annotated[float, Field(gt=0, le=MAX_LATENCY_MS)]
    """Milliseconds added to each operation."""
    ops: list[Literal["get", "put", "list", "rename", "delete"]] | None = None
    """The operations slowed; none: all."""
    duration_s: PosSeconds | None = None
    """How long; none: until the run ends."""


class StorageError(_Counted):
    kind: Literal["storage_error"]
    """Fail storage operations of one type (the engine must fail or retry loudly)."""
    op: Literal["put", "rename", "delete"]
    """The operation that fails."""
    mode: Literal["error", "lost_response"] = "error"
    """error: the operation fails before it happens; lost_response: a put lands but its
    response is lost (a timeout after the store applied it), so the storage client retries
    it, and the retry must be idempotent (a conditional create that finds its own object)."""
    files: Literal["any", "base", "log", "timeline"] = "any"
    """Which files' operations fail: any; base files (in a mor table only compaction writes
    them); log files; the timeline's files (.hoodie/timeline/)."""

    @model_validator(mode="after")
    def _lost_response_of_a_put(self) -> "StorageError":
        if self.mode == "lost_response" and self.op != "put":
            raise ValueError(f"mode lost_response: allowed op: put (got {self.op!r})")
        return self


class TornFile(_Counted):
    kind: Literal["torn_file"]
    """Truncate a data file right after it is written (a torn write)."""
    target: WriterTarget = "random"
    """The writer task (writer:N, N from 0) or random."""


class WorkerKill(RepeatingFault):
    kind: Literal["worker_kill"]
    """kill -9 a cluster worker (docker kill), restarted later (standalone, docker)."""
    target: WorkerTarget = "random"
    """The cluster worker (worker:N, N from 1) or random."""


class WorkerPause(FaultBase):
    kind: Literal["worker_pause"]
    """SIGSTOP a cluster worker (docker pause) for duration_s (standalone, docker)."""
    target: WorkerTarget = "random"
    """The cluster worker (worker:N, N from 1) or random."""
    duration_s: PosSeconds = 10
    """How long it stays paused (s)."""


AnyFault = (
    WriterCrash
    | CoordinatorCrash
    | CoordinatorPause
    | BatchWriterPause
    | DropAck
    | DelayAck
    | StaleAck
    | ClockSkew
    | StorageLatency
    | StorageError
    | TornFile
    | WorkerKill
    | WorkerPause
    | Partition
    | LinkLatency
    | PacketLoss
)
Fault = Annotated[AnyFault, Field(discriminator="kind")]

# Faults that act on cluster worker processes, which only exist outside local mode.
CLUSTER_BACKENDS = ("standalone", "docker", "hosts")
CLUSTER_FAULTS = {
    "worker_kill": CLUSTER_BACKENDS,
    "worker_pause": CLUSTER_BACKENDS,
    **dict.fromkeys(NETWORK_KINDS, ("hosts",)),  # they act on the links between hosts
}
