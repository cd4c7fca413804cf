"""The cluster smoke scenarios end to end through the runner, and worker faults on them."""

import json
from pathlib import Path

import pytest
from cluster_helpers import docker_answers

from harness.runner.run import run_scenario
from harness.scenario import load_scenario

pytestmark = pytest.mark.cluster
SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def _run(tmp_path, name, *overrides):
    scenario = load_scenario(SCENARIOS / f"{name}.yaml", list(overrides))
    outcome = run_scenario(scenario, tmp_path / "runs", quiet=True)
    return json.loads(outcome.paths.result.read_text())


# Production's storage and locks on real clusters (issue 15): the table lives in the run's
# own S3-compatible server, the executors write it over the S3 API, and the table lock is
# a real ZooKeeper (standalone) or the coordinator's lock service (docker).
S3_TABLE = "table.storage={kind: s3, endpoint: local, bucket: instantbench}"


def _on_s3_with_lock(result, provider):
    environment = result["environment"]
    assert environment["storage"]["kind"] == "s3", environment
    assert environment["lock"]["provider"] == provider, environment


def test_standalone_smoke_with_a_killed_worker_and_a_skewed_coordinator_is_valid(tmp_path):
    faults = (
        "faults=[{kind: worker_kill, at_s: 14, target: 'worker:1'},"
        " {kind: clock_skew, at_s: 8, duration_s: 10, target: coordinator, offset_ms: -300}]"
    )
    lock = "engine.lock.provider=zookeeper"
    result = _run(tmp_path, "cluster-standalone-smoke", faults, S3_TABLE, lock)
    assert result["verdict"] == "valid", json.dumps(result, default=str)[:3000]
    _on_s3_with_lock(result, "zookeeper")
    killed = [f for f in result["faults"] if f["kind"] == "worker_kill"]
    assert killed and killed[0]["applied"] and killed[0]["evidence"]["pid"]
    assert killed[0]["evidence"]["worker_after"]["alive"] is False
    assert result["environment"]["backend"] == "standalone"
    # Writer tasks never read a clock (validate refuses writer:N and worker:N): the
    # coordinator's is read, and records the skew its first reader got.
    coordinator = [f for f in result["faults"] if f["target"] == "coordinator"]
    assert coordinator and coordinator[0]["evidence"]["skew_read_ms"] == -300


def test_docker_smoke_with_a_paused_worker_is_valid(tmp_path, prerequisite):
    ok, why = docker_answers()
    prerequisite(ok, f"`docker info` fails, no docker engine (.ci/run starts one): {why}")
    faults = "faults=[{kind: worker_pause, at_s: 14, duration_s: 6, target: 'worker:1'}]"
    lock = "engine.lock.provider=service"
    result = _run(tmp_path, "cluster-docker-smoke", faults, S3_TABLE, lock)
    assert result["verdict"] == "valid", json.dumps(result, default=str)[:3000]
    _on_s3_with_lock(result, "service")
    paused = [f for f in result["faults"] if f["kind"] == "worker_pause"]
    assert paused and paused[0]["applied"] and paused[0]["evidence"]["container"]
