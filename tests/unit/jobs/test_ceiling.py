"""fraction_of_ceiling (harness/jobs/ceiling.py): the search over probe rates, the cache
per machine and shape, and the resolved scenario. The probes are fakes: no Spark."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.jobs import ceiling
from harness.jobs.slo_search import Config, Point
from harness.runner.errors import RunError
from harness.runner.rundir import RunOutcome, RunPaths
from harness.scenario import ScenarioError, load_scenario, validate_scenario

MAIN = Path(__file__).resolve().parents[3] / "scenarios" / "blocking-vs-async.yaml"


def _judge_with(true_ceiling: float, seen: list[float]):
    def judge(rate: float) -> Point:
        seen.append(rate)
        holds = rate <= true_ceiling
        return Point(rate, 2, 1.0, "valid", holds, "holds" if holds else "falls behind")

    return judge


@pytest.mark.parametrize("true_ceiling", [300.0, 27_000.0, 1_000_000.0])
def test_the_search_brackets_the_ceiling_within_its_resolution(true_ceiling: float) -> None:
    seen: list[float] = []
    points = ceiling.search(_judge_with(true_ceiling, seen))
    held = max(p.rate for p in points if p.holds)
    failed = min(p.rate for p in points if not p.holds)
    assert held <= true_ceiling < failed and failed / held <= ceiling.RESOLUTION
    assert len(seen) == len(set(seen)) <= ceiling.MAX_PROBES  # no rate probed twice


def test_the_search_stops_at_its_floor_when_nothing_holds() -> None:
    seen: list[float] = []
    points = ceiling.search(_judge_with(10.0, seen))
    assert not any(p.holds for p in points) and seen[-1] == ceiling.MIN_ROWS_PER_S


def _fake_probes(tmp_path: Path, true_ceiling: float, calls: list[Any], verdict: str = "valid"):
    def run(scenario, runs_dir, variant, quiet):
        calls.append(scenario)
        rate = scenario.source.rate.rows_per_s
        slope = 0.0 if rate <= true_ceiling else 0.5 * rate  # falls behind above the ceiling
        gap = 1.2 if rate <= true_ceiling else 2.0  # its batches outgrow their trigger
        metrics = {
            "backlog_rows": {"slope": slope},
            "freshness_s": {"p99": 2.0},
            "commit_cadence_s": {"p50": gap},
        }
        result = {"verdict": verdict, "metrics": metrics}
        return RunOutcome(RunPaths(tmp_path / variant, tmp_path / "t"), result)

    return run


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "instantbench" / "ceilings.json"


def test_a_fraction_resolves_once_per_machine_and_shape(tmp_path: Path, cache: Path) -> None:
    calls: list[Any] = []
    run = _fake_probes(tmp_path, 40_000.0, calls)
    scenario = load_scenario(MAIN)
    resolved, found = ceiling.resolve_load(scenario, tmp_path, True, run)
    assert found is not None and not found.cached and cache.exists()
    assert 40_000 / ceiling.RESOLUTION <= found.rows_per_s <= 40_000
    rate = resolved.source.rate
    assert rate.ceiling_rows_per_s == found.rows_per_s
    assert rate.rows_per_s == round(rate.fraction_of_ceiling * found.rows_per_s, 1)
    probe = calls[0]
    assert probe.faults == [] and probe.checks == ["exactly_once"] and not probe.matrix
    assert probe.engine.instant_mode == "blocking"  # the scenario as written, not a variant
    # Another seed, length or name is the same shape: from the cache, no probe.
    calls.clear()
    other = load_scenario(MAIN, ["seed=7", "duration_s=99", "name=other"])
    again, cached = ceiling.resolve_load(other, tmp_path, True, run)
    assert calls == [] and cached is not None and cached.cached
    assert again.source.rate.rows_per_s == rate.rows_per_s
    # Another shape is measured again.
    ceiling.resolve_load(load_scenario(MAIN, ["engine.writers=3"]), tmp_path, True, run)
    assert calls


def test_a_resolved_scenario_round_trips_and_keeps_absolute_rates(tmp_path: Path) -> None:
    raw = load_scenario(MAIN, ["source.rate.ceiling_rows_per_s=30000"]).model_dump(mode="json")
    again = validate_scenario(raw)
    assert again.source.rate.rows_per_s == 1_500  # type: ignore[union-attr]
    absolute = load_scenario(MAIN, ["source.rate={shape: constant, rows_per_s: 9000}"])
    assert ceiling.resolve_load(absolute, tmp_path, True, None) == (absolute, None)


def test_an_invalid_probe_stops_the_search(tmp_path: Path, cache: Path) -> None:
    run = _fake_probes(tmp_path, 40_000.0, [], verdict="invalid")
    with pytest.raises(RunError, match="ceiling probe at 20,000 rows/s ended verdict invalid"):
        ceiling.resolve_load(load_scenario(MAIN), tmp_path, True, run)
    assert not cache.exists()  # nothing measured, nothing cached


def test_a_probe_that_broke_under_its_load_did_not_hold(tmp_path: Path, cache: Path) -> None:
    calls: list[Any] = []
    valid = _fake_probes(tmp_path, 1e9, calls)

    def run(scenario, runs_dir, variant, quiet):  # fine up to 50,000 rows/s, then it breaks
        outcome = valid(scenario, runs_dir, variant, quiet)
        if scenario.source.rate.rows_per_s > 50_000:
            outcome.result.update(verdict="unknown", error="driver exited with code 1")
        return outcome

    _, found = ceiling.resolve_load(load_scenario(MAIN), tmp_path, True, run)
    assert found is not None and 50_000 / ceiling.RESOLUTION <= found.rows_per_s <= 50_000
    assert any("driver exited" in p["reason"] for p in found.probes)


def test_no_rate_holding_is_an_error_naming_the_key(tmp_path: Path, cache: Path) -> None:
    run = _fake_probes(tmp_path, 1.0, [])
    with pytest.raises(RunError, match="fraction_of_ceiling: no rate down to 100 rows/s"):
        ceiling.resolve_load(load_scenario(MAIN), tmp_path, True, run)


@pytest.mark.parametrize(
    ("rate", "message"),
    [
        ("{fraction_of_ceiling: 0.5, rows_per_s: 10}", "give rows_per_s or fraction_of_ceiling"),
        ("{rows_per_s: 10, ceiling_rows_per_s: 10}", "ceiling_rows_per_s is only for"),
        ("{fraction_of_ceiling: 1.5}", "fraction_of_ceiling"),
        (
            "{fraction_of_ceiling: 0.5, ceiling_rows_per_s: 1000, rows_per_s: 7}",
            "is not fraction_of_ceiling x ceiling_rows_per_s (500)",
        ),
    ],
)
def test_bad_rates_are_refused(rate: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_scenario(MAIN, [f"source.rate={{shape: constant, {rate[1:]}"])


def test_a_run_refuses_a_fraction_nobody_resolved(tmp_path: Path) -> None:
    from harness.runner.run import run_scenario

    with pytest.raises(ScenarioError, match=r"source\.rate\.fraction_of_ceiling"):
        run_scenario(load_scenario(MAIN), tmp_path)


def test_capacity_points_and_probes_are_one_transform() -> None:
    from harness.jobs.capacity import CapacityGrid, point_scenario

    scenario = load_scenario(MAIN, ["source.rate.ceiling_rows_per_s=30000"])
    point = point_scenario(scenario, CapacityGrid(), 12_000, Config(3, 2.0))
    assert point.source.rate.rows_per_s == 12_000 and point.engine.writers == 3  # type: ignore[union-attr]
    assert point.engine.checkpoint_interval_s == 2.0 and point.faults == scenario.faults
    assert (point.warmup_s, point.duration_s) == (5, 20) and not point.matrix


def test_a_stream_whose_commits_fall_behind_their_trigger_does_not_hold(tmp_path: Path) -> None:
    result = {"metrics": {"commit_cadence_s": {"p50": 1.9}}}
    point = ceiling.keeps_cadence(Point(9e5, 2, 1.0, "valid", True, "holds"), result)
    assert not point.holds and "commits every 1.90 s (median), past 1.5 s" in point.reason
    steady = {"metrics": {"commit_cadence_s": {"p50": 1.2}}}
    assert ceiling.keeps_cadence(Point(9e5, 2, 1.0, "valid", True, "holds"), steady).holds
    unmeasured = ceiling.keeps_cadence(Point(9e5, 2, 1.0, "valid", True, "holds"), {})
    assert not unmeasured.holds and unmeasured.reason == "no commit cadence measured"
