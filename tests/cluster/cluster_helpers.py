"""Helpers of the cluster tests: real Spark standalone processes and docker containers, on
the loopback address block of the test's machine lane (tests/conftest.py: 127.0.0.20+ or
127.0.0.30+), away from the default 127.0.0.10 (a cluster started by hand with
`instantbench cluster up` may be running there) and from the other lane's cluster."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from infra.cluster import ClusterBackend
from infra.cluster.addresses import default_master_host, worker_host

JOB = Path(__file__).with_name("spark_job.py")
JOB_TIMEOUT_S = 180


def lane_master() -> str:
    """The master address of this test's lane (its fixture sets INSTANTBENCH_MASTER_HOST)."""
    return default_master_host()


def lane_worker(n: int) -> str:
    """Worker n's address in this test's lane: the master's plus n."""
    return worker_host(lane_master(), n)


def run_job(cluster: ClusterBackend, partitions: int = 8) -> dict:
    """Run spark_job.py against the cluster in a child process with the driver
    environment the cluster asks for; return its JSON answer."""
    info = cluster.info
    assert info is not None
    env = {**os.environ, **info.driver_env}
    proc = subprocess.run(
        [sys.executable, str(JOB), info.master_url, json.dumps(info.spark_conf), str(partitions)],
        env=env,
        capture_output=True,
        text=True,
        timeout=JOB_TIMEOUT_S,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def docker_answers() -> tuple[bool, str]:
    """Whether `docker info` succeeds, and what it said."""
    try:
        proc = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return False, str(exc)
    return proc.returncode == 0, (proc.stderr or proc.stdout).strip()[-300:]
