"""A ceiling probe on real Spark: the main job's shape at one rate, judged as the ceiling's
search judges it (harness/jobs/ceiling.py). One probe, not the search: the search is
unit-tested with fake probes, and the whole search is the main job's first minutes."""

from pathlib import Path

import pytest

from harness.jobs import ceiling
from harness.runner.run import run_scenario
from harness.scenario import load_scenario

pytestmark = pytest.mark.spark

MAIN = Path(__file__).resolve().parents[2] / "scenarios" / "blocking-vs-async.yaml"


def test_a_probe_of_the_main_job_holds_a_low_rate_and_keeps_no_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ceiling, "MAX_PROBES", 1)  # one probe at the start rate
    monkeypatch.setattr(ceiling, "START_ROWS_PER_S", 5_000.0)
    seen = []

    def probe(scenario, runs_dir, variant, quiet):
        seen.append(outcome := run_scenario(scenario, runs_dir, variant, quiet))
        return outcome

    scenario = load_scenario(MAIN, ["warmup_s=5"])
    found = ceiling.measure(scenario, tmp_path, True, probe)
    [outcome] = seen
    [point] = found.probes
    assert point["holds"], point["reason"]  # valid, SLO, no growing backlog, cadence kept
    assert found.rows_per_s == 5_000 and found.fell_behind_at is None
    metrics = outcome.result["metrics"]
    assert metrics["commit_cadence_s"]["p50"] <= ceiling.CADENCE_SLACK  # 1-s checkpoints
    assert outcome.result["checks"].keys() == {"exactly_once"} and not outcome.result["faults"]
    assert not outcome.paths.table.exists() and outcome.paths.result.exists()
