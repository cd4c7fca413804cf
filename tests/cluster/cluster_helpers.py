"""Helpers of the cluster tests: real Spark standalone processes and docker containers,
one cluster at a time, on loopback addresses away from the default 127.0.0.10 (a cluster
started by hand with `instantbench cluster up` may be running there)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from infra.cluster import ClusterBackend

JOB = Path(__file__).with_name("spark_job.py")
TEST_MASTER_HOST = "127.0.0.20"  # workers on 127.0.0.21, 127.0.0.22
JOB_TIMEOUT_S = 180


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
