"""Standalone backend: real master and worker processes from the pip-installed Spark."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest
from cluster_helpers import lane_master, lane_worker, run_job

from infra.cluster import ClusterError, backend_for, master_json, reap_orphans
from infra.cluster.master_ui import alive_worker_hosts
from infra.cluster.procs import alive, pids_with_env, proc_state, wait_ports_free

pytestmark = pytest.mark.cluster


def _port_free(host: str, port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def _wait(predicate, timeout_s: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return predicate()


def test_standalone_cluster_runs_a_job_and_takes_worker_faults(tmp_path):
    cluster = backend_for(
        "standalone", 2, 1, tmp_path / "cluster", master_host=lane_master(), clock_control=True
    )
    with cluster:
        info = cluster.info
        assert info.master_url == f"spark://{lane_master()}:7077"
        hosts = [lane_worker(1), lane_worker(2)]
        assert [w.host for w in info.workers] == hosts
        assert alive_worker_hosts(master_json(info.web_url)) == hosts
        assert all(alive(w.pid) for w in info.workers)
        assert (tmp_path / "cluster" / "logs" / "master.log").exists()

        # A real job; worker 2's clock runs 5 s ahead (libfaketime in its Python workers).
        cluster.set_worker_clock(2, 5000)
        time.sleep(1.5)  # libfaketime re-reads the offset every second
        answer = run_job(cluster)
        rows = answer["rows"]
        assert sorted(r["id"] for r in rows) == list(range(8))
        assert {r["host"] for r in rows} <= set(hosts)
        assert {r["python"] for r in rows} == {sys.executable}
        for r in rows:
            skew = r["wall_minus_mono"] - answer["base"]
            want = 5.0 if r["host"] == lane_worker(2) else 0.0
            assert abs(skew - want) < 0.5, (r, skew)

        # pause: every process of worker 1 (the worker JVM; during a job also its executor
        # and the executor's Python workers: one process group) is stopped.
        pids1 = cluster.worker_pids(1)
        assert info.worker(1).pid in pids1
        cluster.pause_worker(1)
        assert _wait(lambda: all(proc_state(p) in ("T", "Z", None) for p in pids1), 5)
        assert proc_state(info.worker(1).pid) == "T"
        cluster.resume_worker(1)
        assert _wait(lambda: proc_state(info.worker(1).pid) not in ("T", None), 5)

        # kill: worker 2 and everything under it is gone; the master notices.
        pids2 = cluster.worker_pids(2)
        cluster.kill_worker(2)
        assert not any(alive(p) for p in pids2)
        assert _wait(lambda: alive_worker_hosts(master_json(info.web_url)) == hosts[:1], 30)
        assert cluster.status()["workers"][1]["state"] == "killed"

        # restart: back on its own address, registered again.
        cluster.restart_worker(2, clock_offset_ms=0)
        assert alive_worker_hosts(master_json(info.web_url)) == hosts
        assert alive(info.worker(2).pid) and info.worker(2).pid not in pids2
        cluster_id = cluster.cluster_id
    # down(): no process of the cluster is left, its addresses are free again.
    assert pids_with_env("INSTANTBENCH_CLUSTER_ID", cluster_id) == []
    assert not any(alive(p) for p in pids1 + pids2)
    assert _port_free(lane_master(), 7077) and _port_free(lane_master(), 8080)
    assert _port_free(lane_worker(1), 8081) and _port_free(lane_worker(2), 8081)
    cluster.down()  # idempotent


def test_failed_start_leaves_nothing_behind(tmp_path):
    cluster = backend_for(
        "standalone", 1, 1, tmp_path / "c", master_host=lane_master(), start_timeout_s=0.5
    )
    with pytest.raises(ClusterError, match="registered"):
        cluster.up()
    assert pids_with_env("INSTANTBENCH_CLUSTER_ID", cluster.cluster_id) == []
    assert cluster.info is None


def test_busy_address_is_a_clear_error(tmp_path):
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((lane_master(), 7077))
        s.listen()
        cluster = backend_for("standalone", 1, 1, tmp_path / "c", master_host=lane_master())
        with pytest.raises(ClusterError, match=re.escape(f"{lane_master()}:7077 is in use")):
            cluster.up()


CTRL_C = """
import signal, sys, time
from pathlib import Path
from infra.cluster import backend_for
# A child of a background shell job inherits SIGINT ignored: Ctrl-C must still reach it.
signal.signal(signal.SIGINT, signal.default_int_handler)
with backend_for("standalone", 1, 1, Path(sys.argv[1]), master_host=sys.argv[2]) as c:
    print(c.cluster_id, flush=True)
    time.sleep(600)
"""


# SIGTERM takes the same path as Ctrl-C (the context manager turns it into SystemExit).
# SIGKILL runs no code at all: what the dead run left is found by its markers.
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "sigkill"])
def test_interrupted_or_killed_run_leaves_nothing_behind(tmp_path, sig):
    proc = subprocess.Popen(
        [sys.executable, "-c", CTRL_C, str(tmp_path / "c"), lane_master()],
        stdout=subprocess.PIPE,
        text=True,
        cwd=os.getcwd(),
    )
    try:
        cluster_id = proc.stdout.readline().strip()  # printed once the cluster is up
        assert cluster_id, "the cluster did not come up"
        assert pids_with_env("INSTANTBENCH_CLUSTER_ID", cluster_id)
        proc.send_signal(sig)
        proc.wait(60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if sig == signal.SIGKILL:
        assert pids_with_env("INSTANTBENCH_CLUSTER_ID", cluster_id)  # orphans, until:
        assert reap_orphans("standalone")
    assert pids_with_env("INSTANTBENCH_CLUSTER_ID", cluster_id) == []
    assert not wait_ports_free([(lane_master(), 7077), (lane_worker(1), 8081)], 10)
