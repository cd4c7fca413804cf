"""A run whose table lives in an S3-compatible object store (moto's server, started by the
harness on loopback): a writer crash and puts whose responses were lost, every check
valid, and the final table kept in the run directory, where it reopens after the server
is gone."""

import json
import os

import pytest

from engine.table import Table
from infra.cluster.info import CLUSTER_ENV, OWNER_ENV
from infra.cluster.procs import pids_with_env, proc_env

pytestmark = pytest.mark.spark


def _s3_servers() -> set[int]:
    """S3 servers this process started (a test session's own server fixture among them)."""
    mine = str(os.getpid())
    return {
        p
        for p in pids_with_env(CLUSTER_ENV)
        if proc_env(p).get(CLUSTER_ENV, "").startswith("s3-") and proc_env(p).get(OWNER_ENV) == mine
    }


def test_a_table_in_s3_survives_a_writer_crash_and_is_kept_after_the_server_stops(run):
    before = _s3_servers()
    outcome = run("s3-smoke")
    result = json.loads(outcome.paths.result.read_text())
    assert result["verdict"] == "valid", json.dumps(result["checks"], indent=1)[:3000]
    assert result["environment"]["storage"] == {
        "kind": "s3",
        "endpoint": "local",
        "bucket": "instantbench",
    }
    crashes = [f for f in result["faults"] if f["kind"] == "writer_crash" and f["applied"]]
    assert crashes and all("retry_attempt" in f["evidence"] for f in crashes), result["faults"]
    lost = [f for f in result["faults"] if f["kind"] == "storage_error" and f["applied"]]
    assert lost and all(f["evidence"]["mode"] == "lost_response" for f in lost), result["faults"]

    # The run's server is gone (no process of its store is left; the benchmarks' session
    # server, started before the run, may still be up) ...
    left = _s3_servers() - before
    assert not left, left
    assert (outcome.paths.logs / "s3-server.log").exists()
    # ... and its copy of the final table is whole: every committed row reads back once.
    table = Table.open(str(outcome.paths.table), writer_id="reader")
    try:
        rows = table.snapshot(columns=["event_id"])
    finally:
        table.close()
    assert rows.num_rows == result["metrics"]["rows_committed"] > 0
    assert len(set(rows.column("event_id").to_pylist())) == rows.num_rows
