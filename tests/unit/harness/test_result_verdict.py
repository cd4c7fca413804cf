"""The run's verdict in result.json (harness/runner/analysis.py): an error makes it unknown,
unless the checks judged durable state the error could not change (a system under test
that failed by itself) and found a violation."""

from pathlib import Path

import pytest

from harness.runner.analysis import assemble_result
from harness.runner.rundir import new_run_paths
from harness.scenario import validate_scenario

INVALID = {"exactly_once": {"verdict": "invalid"}, "timeline": {"verdict": "valid"}}
VALID = {"exactly_once": {"verdict": "valid"}}


@pytest.mark.parametrize(
    ("error", "checks", "stands", "verdict"),
    [
        (None, INVALID, False, "invalid"),
        (None, VALID, False, "valid"),
        ("the driver exited by itself", INVALID, False, "unknown"),
        ("the driver exited by itself", INVALID, True, "invalid"),
        ("the driver exited by itself", VALID, True, "unknown"),  # valid proves nothing then
        ("the driver exited by itself", {}, True, "unknown"),
    ],
)
def test_an_error_leaves_the_verdict_unknown_unless_a_violation_stands(
    tmp_path: Path, error: str | None, checks: dict, stands: bool, verdict: str
) -> None:
    scenario = validate_scenario({"name": "v"})
    paths = new_run_paths(scenario, tmp_path, None)
    result = assemble_result(
        scenario, paths, "v-1", None, error, checks, [], [], {}, violation_stands=stands
    )
    assert (result["verdict"], result["error"]) == (verdict, error)
