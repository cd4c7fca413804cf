"""`cluster.backend: hosts` by hand: `instantbench cluster up|status|down --backend hosts`
starts a master and workers on hosts of their own (network namespaces), which outlive the
command, answer to worker faults, and leave nothing behind when taken down."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from infra.cli import load_state
from infra.cluster import attach
from infra.cluster.procs import alive
from infra.hosts.iproute import existing_namespaces, namespace_pids

pytestmark = pytest.mark.cluster

CLI = [sys.executable, "-c", "from harness.cli import main; main()", "cluster"]


def _cli(home, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "INSTANTBENCH_HOME": str(home)}
    return subprocess.run(
        [*CLI, *args, "--backend", "hosts"], env=env, capture_output=True, text=True, timeout=240
    )


def test_hosts_cluster_by_hand_up_status_fault_down(tmp_path):
    up = _cli(tmp_path, "up", "--workers", "2")
    assert up.returncode == 0, up.stderr[-3000:]
    assert "hosts cluster up: spark://10.77.0.10:7077" in up.stdout
    info = load_state("hosts", tmp_path)
    assert info is not None and info.network is not None
    prefix = f"ib-{info.network['network_id']}-"
    try:
        assert existing_namespaces(prefix) == [
            f"{prefix}{h}" for h in ("hub", "master", "worker1", "worker2")
        ]
        # The master and each worker run inside their own host, not on this machine's.
        assert namespace_pids(f"{prefix}master") == [info.master_pid]
        assert namespace_pids(f"{prefix}worker2") == [info.worker(2).pid]

        status = _cli(tmp_path, "status")
        assert status.returncode == 0, status.stderr
        assert "2/2 workers alive" in status.stdout
        assert "worker:1 10.77.0.11" in status.stdout
        assert f"host worker:2 10.77.0.12 ({prefix}worker2, up)" in status.stdout

        cluster = attach(info)
        cluster.kill_worker(1)
        assert not alive(info.worker(1).pid)
        assert cluster.status()["alive_workers"] <= 2  # the master notices in its own time
    finally:
        down = _cli(tmp_path, "down")
    assert down.returncode == 0, down.stderr
    assert existing_namespaces(prefix) == []
    assert not alive(info.master_pid) and not alive(info.worker(2).pid)
    assert load_state("hosts", tmp_path) is None
