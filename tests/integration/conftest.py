"""Integration tests run real scenarios on local Spark, one at a time (2 cores)."""

from pathlib import Path

import pytest

from harness.runner.run import RunOutcome, run_scenario
from harness.scenario import load_scenario

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"


@pytest.fixture
def run(tmp_path):
    """run(name, *overrides) -> RunOutcome of scenarios/<name>.yaml with overrides."""

    def _run(name: str, *overrides: str) -> RunOutcome:
        scenario = load_scenario(SCENARIOS / f"{name}.yaml", list(overrides))
        return run_scenario(scenario, tmp_path / "runs", quiet=True)

    return _run
