"""The run's table lock (harness/runner/lock_setup.py): the provider a scenario chose, a
real ZooKeeper started for the run and stopped after, and what result.json records."""

from __future__ import annotations

import pyarrow as pa
import pytest

from engine.config import TableConfig
from engine.locks.zookeeper import ZooKeeperLock
from engine.stream.state import EpochStore
from engine.stream.table_port import serve_table_lock
from engine.table import Table
from harness.runner.lock_setup import lock_environment, run_lock_spec, start_run_lock
from harness.runner.rundir import RunPaths
from harness.runner.table_setup import set_up_table
from harness.scenario import Scenario
from infra.services.zookeeper import ruok


def _paths(tmp_path) -> RunPaths:
    paths = RunPaths(tmp_path / "run", tmp_path / "run" / "table")
    paths.control.mkdir(parents=True)
    return paths


def test_zookeeper_runs_for_the_run_and_every_writer_locks_through_it(tmp_path):
    paths = _paths(tmp_path)
    scenario = Scenario(name="zk", engine={"lock": {"provider": "zookeeper", "lease_s": 4}})
    run_lock = start_run_lock(scenario, paths)
    try:
        host, port = run_lock.spec.endpoint.split(":")
        assert host == "127.0.0.1" and ruok(host, int(port))
        assert (paths.root / "zookeeper" / "data").is_dir()  # its data in the run directory
        assert lock_environment(paths) == {
            "provider": "zookeeper",
            "endpoint": run_lock.spec.endpoint,
            "lease_s": 4.0,
        }
        schema = pa.schema([("id", pa.int64())])
        table = Table.create(
            str(paths.table), TableConfig(), schema, lock_spec=run_lock_spec(paths)
        )
        assert isinstance(table.lock, ZooKeeperLock)
        t = table.start_instant()
        table.commit(t, table.write_files(t, pa.table({"id": [1, 2]})))
        record, _ = table.lock._read_record()  # the hold went through ZooKeeper
        assert record["state"] == "free" and record["owner"] == table.writer_id
        table.close()
        assert Table.open(str(paths.table)).snapshot()["id"].to_pylist() == [1, 2]
    finally:
        run_lock.stop()
    assert not ruok(host, int(port))


def test_the_default_provider_needs_no_service(tmp_path):
    paths = _paths(tmp_path)
    run_lock = start_run_lock(Scenario(name="file"), paths)
    assert run_lock.server is None
    assert lock_environment(paths) == {"provider": "file", "endpoint": None, "lease_s": 10.0}
    run_lock.stop()


@pytest.mark.parametrize("provider", ["file", "storage"])
def test_storage_backed_providers_record_no_endpoint(tmp_path, provider):
    paths = _paths(tmp_path)
    start_run_lock(Scenario(name="s", engine={"lock": {"provider": provider}}), paths).stop()
    assert run_lock_spec(paths).provider == provider and run_lock_spec(paths).endpoint is None


def test_the_bank_opening_commits_under_the_service_provider_before_any_coordinator(tmp_path):
    """The locks suite's lock-lease-service-on could not create its table: the opening
    balances need the lock, and no coordinator served it yet. The setup serves it as an
    epoch of its own; the first coordinator's epoch seals it and locks as usual."""
    paths = _paths(tmp_path)
    scenario = Scenario(
        name="bank",
        source={"mode": "bank", "accounts": 4},
        engine={"lock": {"provider": "service"}},
    )
    start_run_lock(scenario, paths)
    set_up_table(scenario, paths)
    assert EpochStore(Table.open(paths.table_location).storage).current() == 0
    coordinator = Table.open(paths.table_location, lock_spec=run_lock_spec(paths))
    serve_table_lock(coordinator, EpochStore(coordinator.storage).advance(), 10.0)
    t = coordinator.start_instant()
    coordinator.commit(t, coordinator.write_files(t, coordinator.snapshot().slice(0, 1)))
    coordinator.close()
    balances = Table.open(paths.table_location).snapshot()
    assert (
        balances.num_rows == 4 and len(Table.open(paths.table_location).timeline.completed()) == 2
    )
