"""What Apache Iceberg's own Spark writer can be run and judged under, and why not the rest."""

from __future__ import annotations

from harness.systems.capabilities import Capabilities, inline_commit_refusals

_NOT_YET = "not built for iceberg yet (issue 34)"
_NO_LOCK = (
    "Iceberg's catalog serialises its commits (the JDBC catalog's row update): it takes no "
    "lock provider; leave engine.lock.provider out"
)

ICEBERG = Capabilities(
    kind="iceberg",
    versions=("1.11.0",),  # harness/systems/iceberg/runtime.py: ICEBERG_RUNTIMES
    modes=("append", "bank"),
    # Iceberg v2 tables with copy-on-write MERGE (its default write mode): the engine's cow.
    table_types=("cow",),
    backends=("local",),
    checks=("exactly_once", "unique_keys", "timeline", "isolation", "bank"),
    # after_commit: the snapshot that records the batch (spark.sql.streaming.epochId in its
    # summary) is current in the table's committed metadata while Spark's commit log does
    # not hold the batch yet (harness/systems/spark_stream/seams.py).
    faults={"coordinator_crash": ("after_commit",)},
    max_batch_writers=4,
    batch_writer_ops=("transfer",),
    lock_providers=("file",),  # the default, which a format's run does not use
    catalogs=("hadoop", "jdbc"),  # harness/systems/iceberg/catalog.py
    shared_catalogs=("jdbc",),
    refusals={
        **inline_commit_refusals("Iceberg"),
        "mor": "Iceberg's merge-on-read (delete files) is not built for it yet",
        "upsert": (
            "Iceberg has no idempotent write for foreachBatch (no txnAppId: "
            "apache/iceberg#8809), so an upsert stream's commits name no batch the seam and "
            "the judge can follow; not built yet"
        ),
        # Iceberg's docs: the hadoop catalog is safe only where renames are atomic and
        # exclusive; HadoopTableOperations checks for the next version and then renames,
        # guarded by a lock inside one JVM only.
        "catalog:hadoop": (
            "Iceberg's hadoop catalog swaps metadata versions by a check-then-rename guarded "
            "inside one JVM only, unsafe for writers in several processes"
        ),
        "insert": "batch writers' inserts are not built for iceberg yet",
        "zookeeper": _NO_LOCK,
        "service": _NO_LOCK,
        "storage": _NO_LOCK,
        "standalone": _NOT_YET,
        "docker": _NOT_YET,
    },
)
