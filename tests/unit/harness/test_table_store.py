"""table.storage: the scenario keys (bad input is one line naming file, key and what is
allowed), and the run's table store: moto's S3 server started for the run, the table
written through it, copied into the run directory, the server stopped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engine.config import TableConfig
from engine.table import Table
from harness.runner.rundir import new_run_dir
from harness.runner.table_store import TableStore, storage_environment
from harness.scenario import ScenarioError, load_scenario
from infra.services.s3_server import CREDENTIALS
from tests.unit.engine.engine_helpers import as_dict, rows


def _scenario(tmp_path: Path, storage: str, extra: str = ""):
    path = tmp_path / "s.yaml"
    path.write_text(f"name: s3-test\ntable: {{storage: {storage}}}\n{extra}")
    return load_scenario(path, [])


@pytest.mark.parametrize(
    ("storage", "extra", "expected"),
    [
        ("{kind: s3, bucket: b-1}", "", "table.storage: kind s3 needs endpoint"),
        ("{kind: local, bucket: b-1}", "", "table.storage: bucket: only with kind s3"),
        ("{kind: s3, endpoint: local, bucket: B_1}", "", "table.storage.bucket: not allowed"),
        ("{kind: s3, endpoint: ftp://x, bucket: b-1}", "", "table.storage.endpoint: not allowed"),
        ("{kind: gcs}", "", "table.storage.kind"),
        (
            "{kind: s3, endpoint: local, bucket: b-1}",
            "engine: {sink: raw_parquet}\n",
            "engine.sink: with table.storage.kind s3 allowed: engine",
        ),
    ],
)
def test_bad_storage_keys_are_one_line_errors(tmp_path, storage, extra, expected):
    with pytest.raises(ScenarioError) as info:
        _scenario(tmp_path, storage, extra)
    message = str(info.value)
    assert expected in message and "s.yaml" in message and "\n" not in message.strip()


def test_a_local_table_needs_no_store(tmp_path):
    scenario = _scenario(tmp_path, "{latency_ms: 0}")
    paths = new_run_dir(tmp_path / "runs", scenario.name, None, None)
    store = TableStore(scenario, paths)
    assert store.start() == str(paths.table) and store.executor_env() == {}
    assert storage_environment(scenario) == {"kind": "local", "endpoint": None}


def test_a_local_s3_store_holds_the_table_then_leaves_a_copy_in_the_run_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "a-real-key")  # never handed to the run
    scenario = _scenario(tmp_path, "{kind: s3, endpoint: local, bucket: ib-unit}")
    paths = new_run_dir(tmp_path / "runs", scenario.name, None, None)
    store = TableStore(scenario, paths)
    try:
        location = store.start()
        assert location.startswith(f"s3://ib-unit/{paths.root.name}?endpoint=http://127.0.0.1:")
        assert store.executor_env() == {
            f"spark.executorEnv.{k}": v for k, v in CREDENTIALS.items()
        }  # the run's own credentials, not the user's
        table = Table.create(location, TableConfig(file_groups=2), rows([0]).schema, max_skew_ms=0)
        instant = table.start_instant()
        table.commit(instant, table.write_files(instant, rows([1, 2]), op="upsert"))
        table.close()
        assert not paths.table.exists()  # the live table is in the bucket
        store.keep_copy()
        server = store._server
    finally:
        store.stop()
    assert server._proc is None  # stopped
    assert os.environ["AWS_ACCESS_KEY_ID"] == "a-real-key"  # the runner's own, restored
    copy = Table.open(str(paths.table), max_skew_ms=0)  # the server is gone; the copy opens
    try:
        assert as_dict(copy.snapshot()) == {1: 10, 2: 20}
    finally:
        copy.close()
    assert (paths.logs / "s3-server.log").exists()
    assert storage_environment(scenario) == {"kind": "s3", "endpoint": "local", "bucket": "ib-unit"}
