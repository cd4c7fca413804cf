"""A writer task's Python worker killed inside Hudi's write (runtime side).

Hudi's Spark writer runs in the JVM; the only process of a task that can die apart from
its executor is a Python worker. For a run with a writer crash, the stream's input passes
through one Python stage before Hudi's sink (the events repartitioned into one task per
writer, then an identity UDF): Hudi's write job evaluates that stage while it profiles
the batch, with the batch's instant already requested on the timeline and before any of
its files is written. The first attempt of the armed task, once it sees such an instant
pending, claims `<label>.exited` (create-exclusive) and SIGKILLs its own worker: Spark
sees the worker crash, fails the task and runs it again. The retry of that task claims
`<label>.retried`: the runner records the fault only then (harness/systems/hudi/
task_crash.py), as the engine's writer crash is recorded by its retry.

The runner arms one crash at a time by writing `armed.json` ({label, partition,
every_attempt}) into the crash folder. With `every_attempt` (a driver crash mid_retry),
every attempt of that task dies, so Spark fails the job and Hudi's sink retries the batch
(`<label>.exited-N` for attempt N). Shipped to the executors with addPyFile, so it
imports only pyspark and the standard library (and timeline_names.py, shipped beside it).
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from typing import Any

from pyspark import TaskContext
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.functions import col, udf
from pyspark.sql.types import LongType

try:  # imported as a module of the project (its tests)
    from harness.systems.hudi.timeline_names import pending_instants
except ImportError:  # on the Hudi runtime's python: shipped beside this module
    from timeline_names import pending_instants  # type: ignore[no-redef]

ARMED = "armed.json"
BATCH_PROPERTY = "streaming.sql.batchId"  # set by Spark on every job of a micro-batch
DRIVER_PROPERTY = "instantbench.driver.pid"  # set here: a restarted driver's stage ids repeat
CRASH_COLUMN = "event_id"  # any column Hudi writes: the UDF returns it unchanged


def read_claim(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """A claim or armed.json as written (whole: written by rename or create-exclusive),
    None if it is not there yet."""
    try:
        with open(path, encoding="utf-8") as handle:
            record: dict[str, Any] = json.load(handle)
            return record
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def _claim(path: str, record: dict[str, Any]) -> bool:
    """Create `path` with `record`, durably, unless it exists (one claimant wins)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(record, handle)
        handle.flush()
        os.fsync(handle.fileno())
    return True


def _task(ctx: TaskContext) -> dict[str, Any]:
    return {
        "pid": os.getpid(),
        "stage": ctx.stageId(),
        "partition": ctx.partitionId(),
        "attempt": ctx.attemptNumber(),
        "batch_id": ctx.getLocalProperty(BATCH_PROPERTY),
        "driver": ctx.getLocalProperty(DRIVER_PROPERTY),
        "t": time.time(),
    }


def at_task_start(spec: dict[str, Any], ctx: TaskContext) -> None:
    """Once per task attempt: the armed task's first attempt dies if its batch's instant
    is pending; a later attempt of the task that died (same driver, stage and partition)
    dies too when the crash must fail the batch (`every_attempt`), or says it ran again."""
    folder = spec["dir"]
    armed = read_claim(os.path.join(folder, ARMED))
    if armed is None or armed["partition"] != ctx.partitionId():
        return
    label, attempt = armed["label"], ctx.attemptNumber()
    exited = os.path.join(folder, f"{label}.exited")
    died = read_claim(exited)
    if attempt == 0 and died is None:
        pending = pending_instants(spec["timeline"], spec["actions"])
        if pending and _claim(exited, {**_task(ctx), "pending_instants": pending}):
            os.kill(os.getpid(), signal.SIGKILL)
        return
    task = (ctx.stageId(), ctx.partitionId(), ctx.getLocalProperty(DRIVER_PROPERTY))
    if attempt == 0 or died is None or (died["stage"], died["partition"], died["driver"]) != task:
        return
    if not armed.get("every_attempt"):
        _claim(os.path.join(folder, f"{label}.retried"), _task(ctx))
    elif _claim(os.path.join(folder, f"{label}.exited-{attempt}"), _task(ctx)):
        os.kill(os.getpid(), signal.SIGKILL)


def passthrough(spec: dict[str, Any]) -> Callable[[Any], Any]:
    """The identity UDF's function; it looks at the crash folder once per task attempt."""
    seen: set[tuple[int, int, int]] = set()

    def identity(value: Any) -> Any:
        ctx = TaskContext.get()
        if ctx is not None:
            key = (ctx.stageId(), ctx.partitionId(), ctx.attemptNumber())
            if key not in seen:
                seen.add(key)
                at_task_start(spec, ctx)
        return value

    return identity


def with_crash_stage(spark: SparkSession, source: DataFrame, spec: dict[str, Any]) -> DataFrame:
    """`source` through one Python task per writer (spec["writers"]) before Hudi's sink."""
    here = os.path.dirname(os.path.abspath(__file__))
    for module in ("timeline_names.py", "task_crash_stage.py"):
        spark.sparkContext.addPyFile(os.path.join(here, module))
    os.makedirs(spec["dir"], exist_ok=True)
    # The stream's thread, started after this, inherits the driver's local properties.
    spark.sparkContext.setLocalProperty(DRIVER_PROPERTY, str(os.getpid()))
    stage = udf(passthrough(spec), LongType()).asNondeterministic()
    return source.repartition(int(spec["writers"])).withColumn(
        CRASH_COLUMN, stage(col(CRASH_COLUMN))
    )
