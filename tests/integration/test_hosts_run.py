"""A run on hosts of its own (`cluster.backend: hosts`): every process in a network
namespace (the runner, the driver, the master, each worker, the object store, ZooKeeper),
the links cut by a partition whose effect and heal the runner's probes saw; with every
safety switch on the checks stay valid, and nothing of the network outlives the run,
however it ends."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.history import load_events
from infra.hosts.iproute import existing_namespaces
from infra.hosts.network import STATE_DIR

pytestmark = pytest.mark.cluster

SCENARIO = Path(__file__).resolve().parents[2] / "scenarios" / "network"
PARTITION = "partition-executor-coordinator"
# The run keeps its table where production does, in the object store (on its own host),
# locked through ZooKeeper (on its own host), with a batch writer (on the runner's) beside.
SERVICES = (
    "table.storage={kind: s3, endpoint: local, bucket: instantbench}",
    "engine.lock.provider=zookeeper",
    "batch_writers.count=1",
    "batch_writers.rows_per_commit=200",
)


def test_a_partition_between_executor_and_coordinator_is_seen_and_survived(run):
    # In this test's process, where earlier tests may have used S3 on this machine's own
    # network: the run's runner is a process of its own on the runner host.
    outcome = run(f"network/{PARTITION}", *SERVICES)
    result, run_dir = outcome.result, outcome.paths.root
    assert result["verdict"] == "valid", json.dumps(result["checks"], indent=1)[:3000]
    hosts = result["environment"]["hosts"]
    assert hosts["hosts"] == {
        "runner": "10.77.0.2",
        "driver": "10.77.0.3",
        "master": "10.77.0.10",
        "worker:1": "10.77.0.11",
        "worker:2": "10.77.0.12",
        "s3": "10.77.0.4",
        "zookeeper": "10.77.0.5",
    }
    assert hosts["up_s"] > 0
    assert existing_namespaces(f"ib-{hosts['network_id']}-") == []  # gone with the run
    # Each process was where its host is: the store and the lock served on their addresses.
    assert result["environment"]["lock"]["endpoint"].startswith("10.77.0.5:")
    events, _ = load_events(run_dir / "history")
    (cut,) = [e for e in events if e.get("kind") == "fault"]
    evidence = cut["evidence"]
    assert cut["fault_kind"] == "partition" and cut["applied"]
    assert evidence["before"]["received"] > 0  # the link worked before the cut
    assert evidence["during"]["received"] == 0  # no echo crossed the cut
    assert evidence["healed"]["received"] > 0 and evidence["healed_s"] >= cut["end_s"] == 24
    assert evidence["dropped"] > 0
    assert evidence["rules"] == [
        "ip saddr 10.77.0.3 ip daddr 10.77.0.11 counter packets 0 bytes 0 drop",
        "ip saddr 10.77.0.11 ip daddr 10.77.0.3 counter packets 0 bytes 0 drop",
    ]


def _own_network(runner: subprocess.Popen, timeout_s: float = 60) -> str:
    """The id of the network the runner process made (its description names it)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for path in STATE_DIR.glob("*.json"):
            try:
                state = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if state.get("owner_pid") == runner.pid:
                return str(state["network_id"])
        assert runner.poll() is None, "the run ended before it made its network"
        time.sleep(0.1)
    raise AssertionError(f"no network of the run within {timeout_s}s")


def test_sigterm_removes_the_run_s_hosts(tmp_path):
    command = [sys.executable, "-c", "from harness.cli import main; main()", "run"]
    command += [str(SCENARIO / f"{PARTITION}.yaml"), "--out", str(tmp_path), "--quiet"]
    runner = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        network_id = _own_network(runner)
        prefix = f"ib-{network_id}-"
        deadline = time.monotonic() + 120
        while len(existing_namespaces(prefix)) < 6 and time.monotonic() < deadline:
            time.sleep(0.1)  # hub, runner, driver, master, two workers
        assert len(existing_namespaces(prefix)) == 6
        runner.send_signal(signal.SIGTERM)
        code = runner.wait(90)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    assert code == 2, runner.stderr.read().decode()[-2000:] if runner.stderr else code
    assert existing_namespaces(prefix) == []
    assert not (STATE_DIR / f"{network_id}.json").exists()
