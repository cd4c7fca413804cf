"""Create the run's table before the stream starts (and the bank's opening balances)."""

from __future__ import annotations

from engine.clock import SystemClock
from engine.config import Safety, TableConfig
from engine.stream.state import EpochStore
from engine.stream.table_port import serve_table_lock
from engine.table import Table
from harness.pipeline.events import SCHEMA, opening_balances
from harness.runner.driver_config import event_spec
from harness.runner.lock_setup import run_lock_spec
from harness.runner.rundir import RunPaths
from harness.scenario import Scenario


def table_config(scenario: Scenario) -> TableConfig:
    spec = scenario.table
    return TableConfig(
        table_type=spec.type, key_field=spec.key, file_groups=spec.file_groups, index=spec.index
    )


def set_up_table(scenario: Scenario, paths: RunPaths) -> None:
    if scenario.engine.sink == "raw_parquet":
        paths.table.mkdir(parents=True, exist_ok=True)
        return
    lock_spec = run_lock_spec(paths)  # the run's table lock
    Table.create(paths.table_location, table_config(scenario), schema=SCHEMA, lock_spec=lock_spec)
    if scenario.source.mode == "bank":
        table = Table.open(
            paths.table_location,
            clock=SystemClock(),
            safety=Safety(),
            max_skew_ms=0,
            writer_id="setup",
            lock_spec=lock_spec,
        )
        if lock_spec.provider == "service":
            # No coordinator serves the lock yet: the setup serves it in-process, as an
            # epoch of its own, which the first coordinator's epoch then seals.
            serve_table_lock(table, EpochStore(table.storage).advance(), lock_spec.lease_s)
        # The table's data action (a mor table's commits are compactions, as in Hudi).
        instant = table.start_instant(metadata={"purpose": "opening balances"})
        stats = table.write_files(instant, opening_balances(event_spec(scenario)), op="upsert")
        table.commit(instant, stats, metadata={"purpose": "opening balances"})
        table.close()  # its lock's renewal thread (a ZooKeeper session)
