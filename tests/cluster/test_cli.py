"""`instantbench cluster up|status|down` functions: a cluster outliving the command that
started it, found again through the state file."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from cluster_helpers import lane_master

from infra.cli import cluster_down, cluster_status, format_status, state_path
from infra.cluster import ClusterError
from infra.cluster.procs import pids_with_env

pytestmark = pytest.mark.cluster

UP = """
import sys
from pathlib import Path
from infra.cli import cluster_up
info = cluster_up("standalone", workers=1, directory=Path(sys.argv[1]), master_host=sys.argv[2])
print(info.cluster_id)
"""


def test_cluster_up_status_down_across_processes(tmp_path):
    # `up` in a process that exits: the cluster keeps running.
    proc = subprocess.run(
        [sys.executable, "-c", UP, str(tmp_path), lane_master()],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    cluster_id = proc.stdout.split()[-1]
    try:
        state = json.loads(state_path("standalone", tmp_path).read_text())
        assert state["cluster_id"] == cluster_id
        assert state["master_url"] == f"spark://{lane_master()}:7077"
        status = cluster_status("standalone", tmp_path)
        assert status["up"] and status["alive_workers"] == 1
        assert "1/1 workers alive" in format_status(status)
        assert pids_with_env("INSTANTBENCH_CLUSTER_ID", cluster_id)
        with pytest.raises(ClusterError, match="already up"):
            from infra.cli import cluster_up

            cluster_up("standalone", workers=1, directory=tmp_path, master_host=lane_master())
    finally:
        stopped = cluster_down("standalone", tmp_path)
    assert stopped is not None and stopped.cluster_id == cluster_id
    assert pids_with_env("INSTANTBENCH_CLUSTER_ID", cluster_id) == []
    assert not state_path("standalone", tmp_path).exists()
    assert cluster_status("standalone", tmp_path)["up"] is False
    assert cluster_down("standalone", tmp_path) is None  # idempotent
