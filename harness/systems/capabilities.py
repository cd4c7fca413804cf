"""What each system under test can be asked to do, so `validate` refuses the rest with the
reason before anything starts (DESIGN.md "Systems under test": capabilities).

A system's capabilities are data, not code: the scenario rules read them without importing
the system (no Spark, no jars), and a fault or check a system gains later is one entry.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Capabilities:
    kind: str
    versions: tuple[str, ...]  # the first is the default; () = the project's own engine
    modes: tuple[str, ...]
    table_types: tuple[str, ...]
    backends: tuple[str, ...]
    checks: tuple[str, ...]  # also the default checks of a scenario on this system
    # fault kind -> the points it may take (() = the fault has no point, or any of them)
    faults: Mapping[str, tuple[str, ...]]
    # fault kind -> the targets it may take (absent: any the fault allows)
    fault_targets: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # fault keys that cannot act on the system, whatever the kind (the refusal says why)
    refused_fault_keys: tuple[str, ...] = ()
    # why a fault kind, check or key cannot act on this system: shown by `validate`
    refusals: Mapping[str, str] = field(default_factory=dict)
    # "kind.key" -> the lowest value the system can take (the refusal says why)
    fault_minimums: Mapping[str, float] = field(default_factory=dict)
    max_batch_writers: int = 0
    # system.catalog values, the first the default (() = the system has no catalog to choose)
    catalogs: tuple[str, ...] = ()
    # the catalogs through which several writing processes (batch writers) may commit
    shared_catalogs: tuple[str, ...] = ()
    batch_writer_ops: tuple[str, ...] = ()
    # engine.lock.provider values the system's writers can share (with batch writers)
    lock_providers: tuple[str, ...] = ()
    # fault kind -> the lock providers it can act through (absent: any)
    fault_lock_providers: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def default_version(self) -> str | None:
        return self.versions[0] if self.versions else None

    def refusal(self, thing: str) -> str:
        return self.refusals.get(thing, f"not built for {self.kind} yet")


def inline_commit_refusals(label: str) -> dict[str, str]:
    """Why no checkpoint-ACK fault acts on a format whose Spark sink commits inside the
    micro-batch (Hudi's, Delta's and Iceberg's alike)."""
    reason = (
        f"{label}'s Spark sink commits inside the micro-batch (addBatch returns after the "
        "commit): there is no checkpoint ACK between Spark's checkpoint and the commit to {what}"
    )
    return {
        "drop_ack": reason.format(what="drop"),
        "delay_ack": reason.format(what="delay"),
        "stale_ack": reason.format(what="replay"),
    }
