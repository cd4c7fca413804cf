"""Fault kinds as declared parts: for each kind, where it is applied, how `count` and a
missing `duration_s` read, and what it records as evidence. Adding a fault kind means its
typed model (harness/scenario/faults.py: keys, defaults, targets, points; the schedule,
the processes that apply faults and the evidence read its keys from it) and one row here;
the schedule, those processes and `instantbench faults` read this.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal


class FaultKind(StrEnum):
    WRITER_CRASH = "writer_crash"
    COORDINATOR_CRASH = "coordinator_crash"
    COORDINATOR_PAUSE = "coordinator_pause"
    BATCH_WRITER_PAUSE = "batch_writer_pause"
    DROP_ACK = "drop_ack"
    DELAY_ACK = "delay_ack"
    STALE_ACK = "stale_ack"
    CLOCK_SKEW = "clock_skew"
    STORAGE_LATENCY = "storage_latency"
    STORAGE_ERROR = "storage_error"
    TORN_FILE = "torn_file"
    WORKER_KILL = "worker_kill"
    WORKER_PAUSE = "worker_pause"
    PARTITION = "partition"
    LINK_LATENCY = "link_latency"
    PACKET_LOSS = "packet_loss"


# Who applies a fault: the runner (drivers' and workers' processes, the batch writers'
# clocks), the pipeline driver (its coordinator, its ACKs, arming writer crashes), the
# executors (writer tasks), the batch writers (threads of the runner), or the table's
# storage wrapper in every process that uses it.
Where = Literal["runner", "driver", "executors", "batch_writers", "storage"]


@dataclass(frozen=True)
class Evidence:
    by: str  # the process that writes the `fault` event (docs/history.md)
    when: str  # the moment the fault counts as applied
    keys: tuple[str, ...]  # the keys of the event's `evidence`


@dataclass(frozen=True)
class FaultPart:
    applied_in: tuple[Where, ...]
    evidence: Evidence
    counted: bool = False  # `count`: how many ACKs / operations / files one occurrence hits
    lasting: bool = False  # without `duration_s` it lasts until the run ends (else instant)
    on_workers: bool = False  # targets cluster workers (worker:N), not writer tasks


# stale_ack: how long after an ACK its replay is delivered.
STALE_REPLAY_AFTER_S = 5.0

# The keys of a late ACK's evidence once the coordinator handled it.
_HANDLED = ("delivered_s", "handled_s", "coordinator", "committed")
_WORKER_KEYS = ("worker", "host", "pid", "container", "workers_before", "worker_after")
_NETWORK_KEYS = ("rules", "before", "during", "healed", "healed_s", "dropped")


def _ack(when: str, *keys: str) -> FaultPart:
    """The pipeline driver applies and records it; `count` ACKs per occurrence."""
    evidence = Evidence("the pipeline driver", when, ("checkpoint_id", *keys))
    return FaultPart(("driver",), evidence, counted=True)


def _storage(evidence: Evidence, counted: bool = False) -> FaultPart:
    """The table's storage wrapper applies it in every process (an instant fault counts
    `count` operations or files; else it lasts)."""
    return FaultPart(("storage",), evidence, counted=counted, lasting=not counted)


def _worker(shows: str) -> FaultPart:
    """The runner applies it to a cluster worker and records it once the worker's status
    shows it."""
    evidence = Evidence("the runner", f"the worker's status shows it {shows}", _WORKER_KEYS)
    return FaultPart(("runner",), evidence, on_workers=True)


def _network(shows: str) -> FaultPart:
    """The runner shapes the hosts' links and records it once it healed them, if a probe
    across the link showed the effect and, after the heal, the link well again."""
    evidence = Evidence(
        "the runner",
        f"its probes showed the effect ({shows}) and, after the heal, echoes again",
        _NETWORK_KEYS,
    )
    return FaultPart(("runner",), evidence)


# A kind without a row fails tests/unit/harness/test_cli_discoverability.py.
PARTS: dict[FaultKind, FaultPart] = {
    FaultKind.WRITER_CRASH: FaultPart(
        ("driver", "executors"),
        Evidence(
            "the retried writer task",
            "Spark's retry of the task that hard-exited at the point starts",
            ("task", "attempt", "exit_code", "point", "batch_id", "retry_attempt", "retry_pid"),
        ),
    ),
    FaultKind.COORDINATOR_CRASH: FaultPart(
        ("driver", "runner"),
        Evidence(
            "the runner",
            "it sees the driver that reached the seam exit by SIGKILL",
            ("pid", "exit_code", "point"),
        ),
    ),
    FaultKind.COORDINATOR_PAUSE: FaultPart(
        ("runner", "driver"),
        Evidence(
            "the runner",
            "the old driver, seen stopped in /proc while its successor started, runs again "
            "after the successor committed (a zombie the run ended before resuming: none)",
            (
                "paused_pid",
                "new_pid",
                "state",
                "resumed_state",
                "resumed_s",
                "point (when given)",
                "point_from (random)",
            ),
        ),
    ),
    FaultKind.BATCH_WRITER_PAUSE: FaultPart(
        ("batch_writers",),
        Evidence(
            "the batch writer (a thread of the runner)",
            "it resumes after another writer took its lease over while it stood at the point "
            "(none did within the wait, or the run ended: never recorded)",
            (
                "point",
                "paused_s",
                "token",
                "lease_taken_over",
                "taken_by",
                "instant / path",
                "point_from (random)",
            ),
        ),
    ),
    FaultKind.DROP_ACK: _ack(
        "the ACK after all `count` were withheld goes to the coordinator (each withheld one "
        "an `ack` event with action dropped; that later ACK must subsume them)",
        "dropped",
        "subsumed_by",
    ),
    FaultKind.DELAY_ACK: _ack(
        "the coordinator has handled the late ACK (a run that ends first records nothing)",
        "delay_s",
        *_HANDLED,
    ),
    FaultKind.STALE_ACK: _ack(
        "the coordinator has handled the replayed ACK (`coordinator: ignored_stale`)",
        "replay_after_s",
        *_HANDLED,
    ),
    FaultKind.CLOCK_SKEW: FaultPart(
        ("driver", "batch_writers"),
        Evidence(
            "the process that reads the clock (driver: the coordinator; runner: batch writers)",
            "a time generation or a heartbeat first reads the skewed clock (a clock nobody "
            "reads in the window leaves no record)",
            (
                "offset_ms | drift_ppm | jump_ms",
                "read_ms",
                "true_ms",
                "skew_read_ms",
                "read_s",
                "reader",
                "wall_ms",
            ),
        ),
        lasting=True,
    ),
    FaultKind.STORAGE_LATENCY: _storage(
        Evidence(
            "every process using the table's storage (listed once)",
            "an operation was held back, once per process",
            ("latency_ms", "first_op", "path", "held_ms", "pid"),
        ),
    ),
    FaultKind.STORAGE_ERROR: _storage(
        Evidence(
            "the process whose operation failed",
            "the operation raised the injected error (mode lost_response: the storage lands the "
            "put, then loses its response; it retries a plain or conditional put itself)",
            ("op", "path", "pid", "mode (lost_response)"),
        ),
        counted=True,
    ),
    FaultKind.TORN_FILE: _storage(
        Evidence(
            "the writer task",
            "the data file was truncated on storage (read back)",
            ("path", "size", "truncated_to", "pid"),
        ),
        counted=True,
    ),
    FaultKind.WORKER_KILL: _worker("dead"),
    FaultKind.WORKER_PAUSE: _worker("stopped"),
    FaultKind.PARTITION: _network("no echo crossed the cut"),
    FaultKind.LINK_LATENCY: _network("the echoes came back slower by at least the delay"),
    FaultKind.PACKET_LOSS: _network("the link's rules dropped packets"),
}


def kinds_where(where: Where) -> frozenset[FaultKind]:
    return frozenset(k for k, p in PARTS.items() if where in p.applied_in)


COUNTED_KINDS = frozenset(k for k, p in PARTS.items() if p.counted)
LASTING_KINDS = frozenset(k for k, p in PARTS.items() if p.lasting)
WORKER_KINDS = frozenset(k for k, p in PARTS.items() if p.on_workers)
STORAGE_KINDS = kinds_where("storage")
