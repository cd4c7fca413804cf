"""The cluster smoke scenarios end to end through the runner, and worker faults on them."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.runner.run import run_scenario
from harness.scenario import load_scenario

pytestmark = pytest.mark.cluster
SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


def _run(tmp_path, name, *overrides):
    scenario = load_scenario(SCENARIOS / f"{name}.yaml", list(overrides))
    outcome = run_scenario(scenario, tmp_path / "runs", quiet=True)
    return json.loads(outcome.paths.result.read_text())


def test_standalone_smoke_with_a_killed_worker_is_valid(tmp_path):
    kill = "faults=[{kind: worker_kill, at_s: 14, target: 'worker:1'}]"
    result = _run(tmp_path, "cluster-standalone-smoke", kill)
    assert result["verdict"] == "valid", json.dumps(result, default=str)[:3000]
    killed = [f for f in result["faults"] if f["kind"] == "worker_kill"]
    assert killed and killed[0]["applied"] and killed[0]["evidence"]["pid"]
    assert result["environment"]["backend"] == "standalone"


def test_docker_smoke_with_a_paused_worker_is_valid(tmp_path):
    docker = shutil.which("docker")
    if (
        docker is None
        or subprocess.run([docker, "info"], capture_output=True, timeout=30).returncode
    ):
        pytest.skip("`docker info` fails: no docker engine (.ci/run starts one)")
    pause = "faults=[{kind: worker_pause, at_s: 14, duration_s: 6, target: 'worker:1'}]"
    result = _run(tmp_path, "cluster-docker-smoke", pause)
    assert result["verdict"] == "valid", json.dumps(result, default=str)[:3000]
    paused = [f for f in result["faults"] if f["kind"] == "worker_pause"]
    assert paused and paused[0]["applied"] and paused[0]["evidence"]["container"]
