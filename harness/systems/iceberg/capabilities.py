"""What Apache Iceberg's own Spark writer can be run and judged under, and why not the rest."""

from __future__ import annotations

from harness.systems.capabilities import Capabilities, inline_commit_refusals

_NOT_YET = "not built for iceberg yet (issue 34: batch writers and bank come next)"
_UNSAFE_WRITERS = (
    "batch writers are processes of their own, and Iceberg's hadoop catalog (the one built "
    "here) swaps metadata versions by a check-then-rename guarded inside one JVM only "
    "(HadoopTableOperations' lock manager): unsafe for writers in several processes; a "
    "catalog that serialises commits (JDBC) is not built yet (issue 34)"
)

ICEBERG = Capabilities(
    kind="iceberg",
    versions=("1.11.0",),  # harness/systems/iceberg/runtime.py: ICEBERG_RUNTIMES
    modes=("append",),
    # Iceberg v2 tables with copy-on-write MERGE (its default write mode): the engine's cow.
    table_types=("cow",),
    backends=("local",),
    checks=("exactly_once", "unique_keys", "timeline", "isolation"),
    # after_commit: the snapshot that records the batch (spark.sql.streaming.epochId in its
    # summary) is current in the table's newest metadata while Spark's commit log does not
    # hold the batch yet (harness/systems/spark_stream/seams.py).
    faults={"coordinator_crash": ("after_commit",)},
    refusals={
        **inline_commit_refusals("Iceberg"),
        "mor": "Iceberg's merge-on-read (delete files) is not built for it yet",
        "upsert": (
            "Iceberg has no idempotent write for foreachBatch (no txnAppId: "
            "apache/iceberg#8809), so an upsert stream's commits name no batch the seam and "
            "the judge can follow; not built yet"
        ),
        "bank": _NOT_YET,
        "batch_writers": _UNSAFE_WRITERS,
        "standalone": _NOT_YET,
        "docker": _NOT_YET,
    },
)
