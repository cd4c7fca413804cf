"""What Apache Hudi's own Spark writer can be run and judged under, and why not the rest."""

from __future__ import annotations

from harness.systems.capabilities import Capabilities, inline_commit_refusals

_HADOOP_IO = (
    "Hudi reads and writes through Hadoop's file system in its own JVM, which the engine's "
    "storage fault hooks do not reach"
)

_BATCH_OPS = (
    "Hudi batch writers run bank transfers (MERGE INTO, a read-modify-write under OCC); "
    "plain upserts and inserts are not built for them yet"
)

HUDI = Capabilities(
    kind="hudi",
    versions=("1.2.0",),  # harness/systems/hudi/runtime.py: HUDI_RUNTIMES
    modes=("append", "upsert", "bank"),
    table_types=("cow", "mor"),
    # standalone: the runtime's own Spark 3.5 daemons (harness/runner/cluster_setup.py);
    # docker: the image's venv of the same pyspark (infra/docker/image.py RUNTIME_PYSPARK)
    backends=("local", "standalone", "docker"),
    checks=("exactly_once", "unique_keys", "timeline", "isolation", "bank"),
    # Driver SIGKILLs at Hudi's commit seams as seen from outside its JVM: mid_commit = the
    # batch's instant is requested or inflight on the timeline, not completed; after_commit
    # = its completed instant is on the timeline while Spark's commit log does not hold the
    # batch yet (apache/hudi#6098).
    # A batch writer stopped once it is seen holding the ZooKeeper lock (lock_held), or
    # holding it with its metadata-table commit inflight (commit_before_completed: past
    # Hudi's conflict check), past its session's timeout (harness/systems/hudi/lock_pause.py).
    faults={
        # mid_retry: the harness fails a batch (every attempt of one task dies in the
        # Python stage, harness/systems/hudi/task_crash_stage.py) and kills the driver once
        # the sink's retry of the batch requested its instant (seams.py: KillMidRetry).
        "coordinator_crash": ("mid_commit", "after_commit", "mid_retry"),
        # The driver stopped inside Hudi's commit while a successor takes over its
        # checkpoint (harness/systems/hudi/driver_pause.py).
        "coordinator_pause": ("mid_commit",),
        "clock_skew": (),
        "batch_writer_pause": ("lock_held", "commit_before_completed"),
        # A writer task's Python worker SIGKILLed inside Hudi's write job, with the batch's
        # instant requested, before any of its files is written; Spark retries the task
        # (harness/systems/hudi/task_crash_stage.py).
        "writer_crash": ("before_flush",),
        # A standalone worker's process group (worker and executor JVMs, Python workers)
        # killed or stopped (harness/faults/worker_faults.py)
        "worker_kill": (),
        "worker_pause": (),
    },
    # The stream driver's clock, moved by libfaketime from outside its JVM.
    fault_targets={"clock_skew": ("coordinator",)},
    fault_minimums={"clock_skew.drift_ppm": 0.0},
    refusals={
        **inline_commit_refusals("Hudi"),
        "storage_latency": _HADOOP_IO,
        "storage_error": _HADOOP_IO,
        "torn_file": _HADOOP_IO,
        "hudi_reader": (
            "hudi_reader compares hudi-rs with the engine's own reads; Hudi's table is read "
            "through Hudi's Spark reader by the other checks"
        ),
        "hudi_java_reader": (
            "hudi_java_reader compares Java Hudi's reader with the engine's own reads; Hudi's "
            "table is read through Hudi's Spark reader by the other checks"
        ),
        "writer_crash.point": (
            "seam before the task writes a file: Hudi writes them in its JVM, and a writer "
            "task's one Python process runs in the stage Hudi's write job evaluates first"
        ),
        "clock_skew.drift_ppm": (
            "libfaketime re-reads the driver's offset once a second, so a drift moves the "
            "clock in steps of a second: forward for a fast clock, but back (a jump, not a "
            "drift) for a slow one; a clock behind is an offset_ms or jump_ms"
        ),
        "upsert": _BATCH_OPS,
        "insert": _BATCH_OPS,
        "service": "the engine's lock service has no Hudi client",
        "batch_writer_pause:file": (
            "Hudi's file-system lock has no session to expire (it expires by its file's age, "
            "in whole minutes): the pause needs the ZooKeeper lock, whose holder the runner "
            "can see"
        ),
        "storage": (
            "Hudi's storage-based lock provider needs an object store (S3, GCS, Azure); "
            "a local table uses its file-system lock provider (file)"
        ),
    },
    # Spark applications of their own beside the stream (harness/systems/hudi/batch_writer.py)
    max_batch_writers=4,
    batch_writer_ops=("transfer",),
    lock_providers=("zookeeper", "file"),
    fault_lock_providers={"batch_writer_pause": ("zookeeper",)},
)
