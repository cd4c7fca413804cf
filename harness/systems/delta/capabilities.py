"""What Delta Lake's own Spark writer can be run and judged under, and why not the rest."""

from __future__ import annotations

from harness.systems.capabilities import Capabilities

_INLINE_COMMIT = (
    "Delta's Spark sink commits inside the micro-batch (addBatch returns after the commit): "
    "there is no checkpoint ACK between Spark's checkpoint and the commit to {what}"
)
_NOT_YET = "not built for delta yet (issue 34: batch writers and bank come next)"

DELTA = Capabilities(
    kind="delta",
    versions=("4.4.0",),  # harness/systems/delta/runtime.py: DELTA_RUNTIMES
    modes=("append", "upsert"),
    # Delta rewrites the files an update touches (copy-on-write; deletion vectors are off
    # unless a table property turns them on): the engine's cow is its one layout.
    table_types=("cow",),
    backends=("local",),
    checks=("exactly_once", "unique_keys", "timeline", "isolation"),
    # after_commit: the batch's version is in _delta_log (its txn action names the batch)
    # while Spark's commit log does not hold the batch yet (harness/systems/delta/seams.py).
    faults={"coordinator_crash": ("after_commit",)},
    refusals={
        "drop_ack": _INLINE_COMMIT.format(what="drop"),
        "delay_ack": _INLINE_COMMIT.format(what="delay"),
        "stale_ack": _INLINE_COMMIT.format(what="replay"),
        "mor": "Delta has no merge-on-read file layout (its updates rewrite files)",
        "bank": _NOT_YET,
        "batch_writers": _NOT_YET,
        "standalone": _NOT_YET,
        "docker": _NOT_YET,
    },
)
