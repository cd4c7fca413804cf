"""What Delta Lake's own Spark writer can be run and judged under, and why not the rest."""

from __future__ import annotations

from harness.systems.capabilities import Capabilities, inline_commit_refusals

_NOT_YET = "not built for delta yet (issue 34)"
# Delta's storage docs: several writing processes are safe only where the store has an
# atomic put-if-absent (or S3 with the DynamoDB log store); on a local folder
# HDFSLogStore's put-if-absent is a lock inside one JVM (delta-io/delta#683).
_UNSAFE_WRITERS = (
    "batch writers are processes of their own, and Delta calls several writing processes "
    "unsafe on a local folder: its log store's put-if-absent of _delta_log/<version>.json "
    "holds within one JVM only (HDFSLogStore), so two commits of one version can overwrite "
    "each other; the setup Delta documents for it (S3 with the DynamoDB log store) is not "
    "built yet (issue 34)"
)

DELTA = Capabilities(
    kind="delta",
    versions=("4.4.0",),  # harness/systems/delta/runtime.py: DELTA_RUNTIMES
    modes=("append", "upsert", "bank"),
    # Delta rewrites the files an update touches (copy-on-write; deletion vectors are off
    # unless a table property turns them on): the engine's cow is its one layout.
    table_types=("cow",),
    backends=("local",),
    checks=("exactly_once", "unique_keys", "timeline", "isolation", "bank"),
    # after_commit: the batch's version is in _delta_log (its txn action names the batch)
    # while Spark's commit log does not hold the batch yet (harness/systems/delta/seams.py).
    faults={"coordinator_crash": ("after_commit",)},
    refusals={
        **inline_commit_refusals("Delta"),
        "mor": "Delta has no merge-on-read file layout (its updates rewrite files)",
        "batch_writers": _UNSAFE_WRITERS,
        "standalone": _NOT_YET,
        "docker": _NOT_YET,
    },
)
