"""Checks are a registry (harness/runner/check_inputs.py): each declares what it needs, the
runner loops over it, and one check that raises is `unknown` while the others keep theirs."""

from pathlib import Path
from typing import get_args

import pyarrow as pa
import pytest

from harness.checks import CheckResult
from harness.runner import check_inputs
from harness.runner.check_inputs import CHECKS, Check, Inputs, run_checks
from harness.runner.final_state import FinalState
from harness.runner.rundir import RunPaths
from harness.runner.spark_checks import ON_SPARK
from harness.scenario import Scenario, load_scenario
from harness.scenario.model import CheckName


def test_every_check_a_scenario_may_name_is_registered_and_no_other() -> None:
    assert set(CHECKS) == set(get_args(CheckName))
    assert all(name == spec.name and spec.needs for name, spec in CHECKS.items())


def test_the_declared_needs_decide_which_checks_distrust_an_unreadable_history() -> None:
    history = {n for n, spec in CHECKS.items() if spec.reads_history}
    assert history == {"exactly_once", "timeline", "isolation", "bank"}
    assert check_inputs.WHOLE_TABLE == ("exactly_once", "unique_keys")
    assert set(ON_SPARK) == set(check_inputs.WHOLE_TABLE)  # each has its Spark path


def _scenario(tmp_path: Path, checks: str) -> Scenario:
    path = tmp_path / "scenario.yaml"
    # check_engine: the whole-table checks in the runner (the fake tables have no size).
    path.write_text(f"name: t\nchecks: [{checks}]\ncheck_engine: pyarrow\n")
    return load_scenario(path, [])


def _run(tmp_path: Path, scenario: Scenario, table: object = None) -> dict[str, CheckResult]:
    ids = pa.array([1, 2, 3], pa.int64())
    final = FinalState(read_rows=lambda: pa.table({"id": ids, "event_id": ids}), table=table)
    paths = RunPaths(root=tmp_path, table=tmp_path / "table")
    return {r.name: r for r in run_checks(scenario, [], final, paths)}


def _fixed(name: str, verdict: str, needs: set[str]) -> Check:
    return Check(name, frozenset(needs), lambda _: CheckResult(name, verdict, {"by": "fake"}))  # type: ignore[arg-type]


def test_the_runner_loops_over_the_registry_and_one_raising_check_is_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(_: Inputs) -> CheckResult:
        raise KeyError("evidence")

    registry = {
        "timeline": _fixed("timeline", "invalid", {"engine_table"}),
        "isolation": Check("isolation", frozenset({"engine_table", "reads"}), broken),
        "unique_keys": _fixed("unique_keys", "valid", {"engine_table"}),
    }
    monkeypatch.setattr(check_inputs, "CHECKS", registry)
    got = _run(tmp_path, _scenario(tmp_path, "timeline, isolation, unique_keys"), table=object())
    assert list(got) == ["timeline", "isolation", "unique_keys"]  # the scenario's order
    assert got["timeline"].verdict == "invalid" and got["unique_keys"].verdict == "valid"
    assert got["isolation"].verdict == "unknown"
    assert got["isolation"].evidence == {"error": "KeyError: 'evidence'"}


def test_checks_that_need_the_engine_table_are_skipped_without_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = {
        "unique_keys": CHECKS["unique_keys"],
        "timeline": _fixed("timeline", "valid", {"engine_table"}),
    }
    monkeypatch.setattr(check_inputs, "CHECKS", registry)
    got = _run(tmp_path, _scenario(tmp_path, "unique_keys, timeline"))  # raw_parquet: no table
    assert list(got) == ["unique_keys"]
    assert (
        got["unique_keys"].verdict == "valid" and got["unique_keys"].evidence["engine"] == "pyarrow"
    )


def test_a_check_without_a_registration_is_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(check_inputs, "CHECKS", {"unique_keys": CHECKS["unique_keys"]})
    got = _run(tmp_path, _scenario(tmp_path, "unique_keys, timeline"), table=object())
    assert got["unique_keys"].verdict == "valid"
    assert got["timeline"].verdict == "unknown"
    assert got["timeline"].evidence == {"error": "ValueError: no checker named 'timeline'"}
