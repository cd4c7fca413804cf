"""Translate a scenario into what the pipeline driver needs."""

from __future__ import annotations

from engine.stream.transport.rpc import Endpoint
from harness.faults.schedule import Occurrence, expand
from harness.pipeline.config import DriverConfig
from harness.pipeline.events import EventSpec
from harness.pipeline.session import local_master
from harness.runner.lock_setup import lock_environment
from harness.runner.rundir import RunPaths
from harness.scenario import Scenario

# Source mode -> the write operation its rows need.
STREAM_OP = {"append": "insert", "upsert": "upsert", "bank": "insert"}
TASK_ATTEMPTS = 4


def event_spec(scenario: Scenario) -> EventSpec:
    return EventSpec(
        mode=scenario.source.mode,
        seed=scenario.seed,
        partitions=scenario.engine.writers,
        keys=scenario.source.keys,
        accounts=scenario.source.accounts,
        payload_bytes=scenario.source.payload_bytes,
        file_groups=scenario.table.file_groups,
    )


def fault_occurrences(scenario: Scenario) -> list[Occurrence]:
    return expand(
        scenario.faults,
        scenario.seed,
        scenario.run_s,
        scenario.engine.writers,
        scenario.cluster.workers,
        scenario.engine.truetime.shared_wait,
    )


def spark_conf(scenario: Scenario, paths: RunPaths, address: str) -> dict[str, str]:
    """The pipeline driver's Spark settings on top of harness/pipeline/session.py's: Spark's
    driver's address (its host's, or loopback), Spark's UI while the run lasts (port 4040
    or, with Spark's retries, the next free one) and the event log in the run directory for
    Spark's History Server. The scenario's cluster.spark_conf comes last, so it may turn
    either off or move the UI's port; the settings the harness depends on were refused when
    the scenario was loaded (harness/scenario/spark_conf.py)."""
    return {
        "spark.driver.host": address,
        "spark.driver.bindAddress": address,
        "spark.ui.enabled": "true",
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": paths.spark_events.resolve().as_uri(),
        **scenario.cluster.spark_conf,
    }


def driver_config(
    scenario: Scenario,
    paths: RunPaths,
    run_id: str,
    master: str | None,
    address: str = "127.0.0.1",
) -> DriverConfig:
    """`address`: the driver's host's (its Spark driver and coordinator listen there)."""
    eng = scenario.engine
    return DriverConfig(
        run_id=run_id,
        run_dir=str(paths.root),
        table_path=paths.table_location,
        checkpoint_dir=str(paths.checkpoint),
        history_dir=str(paths.history),
        state_dir=str(paths.state),
        run_s=scenario.run_s,
        master=master or local_master(eng.writers, TASK_ATTEMPTS),
        sink=eng.sink,
        instant_mode=eng.instant_mode,
        checkpoint_interval_s=eng.checkpoint_interval_s,
        writers=eng.writers,
        write_batch_rows=eng.write_batch_rows,
        op=STREAM_OP[scenario.source.mode],
        event_spec=event_spec(scenario).to_dict(),
        rate=scenario.source.rate.model_dump(mode="json"),
        max_skew_ms=int(eng.truetime.max_skew_ms),
        shared_wait=eng.truetime.shared_wait,
        commit_ack_timeout_s=eng.commit_ack_timeout_s,
        safety=eng.safety.model_dump(),
        secret=Endpoint.new_secret(),
        faults=[o.to_dict() for o in fault_occurrences(scenario)],
        storage_latency_ms=scenario.table.storage.latency_ms,
        compaction_every_s=scenario.table.compaction.every_s,
        archive_keep=scenario.table.services.archive_keep,
        clean_retain_commits=scenario.table.services.clean_retain_commits,
        lock=lock_environment(paths),
        spark_conf=spark_conf(scenario, paths, address),
        rpc_host=address,
        fired_dir=str(paths.control / "fired"),
        stop_file=str(paths.control / "STOP"),
        status_file=str(paths.control / "status.json"),
        t0_file=str(paths.control / "t0"),
    )
