"""The pipeline driver: a child process of the runner holding the SparkSession and the sink.

`python -m harness.pipeline.driver CONFIG.json` streams the source through the sink until
the runner creates the stop file. A SIGKILL of this process is a coordinator crash; the
runner restarts it and the query resumes from its checkpoint location.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from engine.errors import FencedError
from engine.stream.errors import CommitFailedError
from harness.faults.driver_faults import DriverFaults
from harness.faults.fired import FiredLog
from harness.faults.schedule import Occurrence
from harness.history import HistoryWriter
from harness.pipeline.acks import AckWatcher
from harness.pipeline.checkpoints import last_committed_batch
from harness.pipeline.config import (
    COMMIT_REFUSED_EXIT,
    FAILED_EXIT,
    FENCED_EXIT,
    TABLE_SERVICE_FAILED_EXIT,
    DriverConfig,
)
from harness.pipeline.engine_task import warm_up_worker
from harness.pipeline.session import build_session, stop_session
from harness.pipeline.sinks import Sink, make_sink
from harness.pipeline.source import SOURCE_NAME, EventSource
from harness.run_clock import RunClock

if TYPE_CHECKING:
    from pyspark.sql import SparkSession
    from pyspark.sql.streaming import StreamingQuery

STATUS_EVERY_S = 0.5
SETTLE_TIMEOUT_S = 30.0


def _write_status(path: str, sink: Sink) -> None:
    """The live status the runner polls: this process and the sink's totals."""
    tmp = f"{path}.tmp"
    Path(tmp).write_text(json.dumps({"t": time.time(), "pid": os.getpid(), **sink.status()}))
    os.replace(tmp, path)


def _warm_up(spark: SparkSession, tasks: int) -> None:
    """Start the executors' Python workers before the run's clock starts, so that the first
    micro-batch measures the pipeline, not Spark's start-up. Each worker imports the
    writer's modules on the way (see warm_up_worker)."""
    spark.range(tasks, numPartitions=tasks).mapInArrow(warm_up_worker, "id long").collect()


def _start_session(cfg: DriverConfig, history: HistoryWriter) -> tuple[SparkSession, int | None]:
    """The warmed-up session, and the last batch the checkpoint committed (None: none)."""
    spark = build_session(
        f"instantbench-{cfg.run_id}", cfg.master, cfg.spark_conf, ends_with_stop=True
    )
    spark.dataSource.register(EventSource)
    _warm_up(spark, cfg.writers)
    restored = last_committed_batch(cfg.checkpoint_dir)
    # The live Spark UI (None when spark.ui.enabled is false): the runner prints it.
    ui = spark.sparkContext.uiWebUrl
    history.record("driver_start", pid=os.getpid(), restored_batch=restored, spark_ui=ui)
    return spark, restored


def _start_query(spark: SparkSession, cfg: DriverConfig, sink: Sink) -> StreamingQuery:
    stream = (
        spark.readStream.format(SOURCE_NAME)
        .option("spec", json.dumps(cfg.event_spec))
        .option("rate", json.dumps(cfg.rate))
        .option("t0_file", cfg.t0_file)
        .option("run_s", str(cfg.run_s))
        .option("checkpoint_dir", cfg.checkpoint_dir)
        .load()
    )
    return (
        stream.writeStream.foreachBatch(sink.process_batch)
        .option("checkpointLocation", cfg.checkpoint_dir)
        .trigger(processingTime=f"{cfg.checkpoint_interval_s} seconds")
        .start()
    )


def _stream_until_stopped(
    cfg: DriverConfig, sink: Sink, query: StreamingQuery, acks: AckWatcher
) -> bool:
    """Write the status until the runner creates the stop file (True), or until the query,
    the ACKs or a table service fails (False)."""
    while not os.path.exists(cfg.stop_file):
        if not query.isActive or acks.error is not None or sink.service_error() is not None:
            return False
        _write_status(cfg.status_file, sink)
        time.sleep(STATUS_EVERY_S)
    return True


def _settle(sink: Sink, query: StreamingQuery) -> None:
    """Before stopping, let the stream reach a state a restart would not change: recovery
    finished and the commits of every delivered ACK done (a fault may prevent it)."""
    deadline = time.time() + SETTLE_TIMEOUT_S
    while time.time() < deadline and query.isActive and not sink.settled():
        time.sleep(0.1)


def _stop(
    cfg: DriverConfig, sink: Sink, query: StreamingQuery, acks: AckWatcher, faults: DriverFaults
) -> Exception | None:
    """Stop everything; the error of the sink's close, if it raised."""
    query.stop()
    acks.stop()
    faults.stop()
    close_error: Exception | None = None
    try:
        sink.close()
    except Exception as exc:  # the final ACKs' commit failed: the coordinator stopped
        close_error = exc
    _write_status(cfg.status_file, sink)
    return close_error


def run(cfg: DriverConfig) -> int:
    history = HistoryWriter(cfg.history_dir, "driver")
    spark, restored = _start_session(cfg, history)
    occurrences = [Occurrence.from_dict(o) for o in cfg.faults]
    faults = DriverFaults(occurrences, RunClock(cfg.t0_file), history, FiredLog(cfg.fired_dir))
    sink = make_sink(cfg, history, restored, faults)
    faults.start()
    query = _start_query(spark, cfg, sink)
    acks = AckWatcher(
        cfg.checkpoint_dir,
        sink.checkpoint_complete,
        history,
        restored,
        fault_hook=faults.coordinator_hook,
    )
    acks.start()
    try:
        status = "ok" if _stream_until_stopped(cfg, sink, query, acks) else "error"
        _settle(sink, query)
    finally:
        close_error = _stop(cfg, sink, query, acks, faults)
    error = query.exception() or acks.error or close_error or sink.service_error()
    if error is not None:
        status = "error"
    history.record("driver_stop", status=status, error=str(error) if error else None)
    stop_session(spark)
    return 0 if status == "ok" else exit_code(close_error, sink.service_error())


def exit_code(close_error: BaseException | None, service_error: BaseException | None) -> int:
    """A failed driver's exit code (harness/pipeline/config.py says what each means)."""
    # close() waits on every ACK's commit: a refused one surfaces there, whenever it was
    # refused, even if the query died of it first.
    if isinstance(close_error, CommitFailedError):
        return COMMIT_REFUSED_EXIT
    if isinstance(service_error, FencedError):  # a zombie's table service: fencing at work
        return FENCED_EXIT
    return FAILED_EXIT if service_error is None else TABLE_SERVICE_FAILED_EXIT


def main() -> None:
    cfg = DriverConfig.load(sys.argv[1])
    sys.exit(run(cfg))


if __name__ == "__main__":
    main()
