"""The capacity search on synthetic run results (no Spark), and the capacity report."""

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harness.jobs import capacity
from harness.jobs.capacity import CapacityGrid, point_scenario, run_capacity
from harness.jobs.slo_search import (
    Config,
    SloSpec,
    best_point,
    contention_advice,
    judge_point,
    recommendation,
    sweep,
)
from harness.scenario import Scenario, validate_scenario
from reports.capacity_report import render_capacity

SLO = SloSpec(freshness_p99_s=10)


def _scenario() -> Scenario:
    raw = {
        "name": "cap",
        "source": {"rate": {"shape": "constant", "rows_per_s": 10000}},
        "engine": {"writers": 2, "checkpoint_interval_s": 2},
        "slo": {"freshness_p99_s": 10},
    }
    return validate_scenario(raw, "cap.yaml")


def _result(freshness: float, slope: float, verdict: str = "valid") -> dict[str, Any]:
    return {
        "verdict": verdict,
        "run_id": "r",
        "metrics": {
            "freshness_s": {"p99": freshness},
            "backlog_rows": {"slope": slope},
            "throughput_rows_per_s": {"mean": 1.0},
        },
    }


def _pipeline(capacity_by_config: dict[Config, float]):
    """A fake pipeline: keeps up (fresh, flat backlog) below its capacity, then falls behind."""
    calls = []

    def run(rate: float, config: Config) -> dict[str, Any]:
        calls.append((rate, config))
        limit = capacity_by_config[config]
        if rate <= limit:
            return _result(2.0 * config.interval_s, slope=rate * 0.001)
        return _result(40.0, slope=rate - limit)

    return run, calls


def test_a_point_holds_only_with_fresh_data_a_flat_backlog_and_a_valid_run() -> None:
    c = Config(2, 2.0)
    assert judge_point(10000, c, _result(3.0, 50.0), SLO).holds
    stale = judge_point(10000, c, _result(12.0, 0.0), SLO)
    assert not stale.holds and "freshness p99 12.0 s > SLO 10 s" in stale.reason
    behind = judge_point(10000, c, _result(3.0, 500.0), SLO)
    assert not behind.holds and "backlog grows 500" in behind.reason
    invalid = judge_point(10000, c, _result(3.0, 0.0, verdict="invalid"), SLO)
    assert not invalid.holds and invalid.reason == "verdict invalid"
    empty = judge_point(10000, c, {"verdict": "valid", "metrics": {}}, SLO)
    assert not empty.holds and empty.reason == "no freshness measured"
    no_slo = judge_point(10000, c, _result(99.0, 0.0), SloSpec(freshness_p99_s=None))
    assert no_slo.holds


def test_sweep_finds_the_highest_holding_rate_and_skips_rates_above_a_failure() -> None:
    fast, slow = Config(2, 1.0), Config(2, 2.0)
    run, calls = _pipeline({fast: 12000, slow: 25000})
    points = sweep([fast, slow], [5000, 10000, 20000, 40000], run, SLO)
    assert [(p.rate, p.interval_s, p.holds) for p in points] == [
        (5000, 1.0, True),
        (10000, 1.0, True),
        (20000, 1.0, False),
        (5000, 2.0, True),
        (10000, 2.0, True),
        (20000, 2.0, True),
        (40000, 2.0, False),
    ]
    assert (40000, fast) not in calls  # never run above a failed rate
    best = best_point(points)
    assert best is not None and (best.rate, best.interval_s) == (20000, 2.0)
    text = recommendation(points, SLO, "local, 2 worker(s) x 1 core(s)")
    assert text.startswith("At most 20,000 rows/s with checkpoint interval 2 s and 2 writer(s)")
    assert "on this cluster (local, 2 worker(s) x 1 core(s))" in text
    assert "extend" not in text


def test_the_recommendation_says_when_the_grid_was_too_low_or_too_high() -> None:
    c = Config(1, 1.0)
    run, _ = _pipeline({c: 1e9})
    assert "extend the rates" in recommendation(sweep([c], [100, 200], run, SLO), SLO, "x")
    run, _ = _pipeline({c: 10})
    points = sweep([c], [100, 200], run, SLO)
    assert best_point(points) is None and len(points) == 1
    assert recommendation(points, SLO, "x").startswith("No tested rate holds the SLO")


def test_contention_advice() -> None:
    def stage(users: int, rate: float) -> dict[str, Any]:
        return {"users": users, "conflict_rate": rate, "latency_ms": {"p99": 120.0}}

    text = contention_advice([stage(1, 0.0), stage(2, 0.05), stage(4, 0.3)])
    assert text is not None and text.startswith("At most 2 concurrent batch writer(s)")
    assert "at 4 writers 30% of commits conflict" in text
    assert contention_advice([]) is None


def test_point_scenarios_and_the_default_grid() -> None:
    base = _scenario()
    grid = CapacityGrid().resolve(base)
    assert grid.rates == (5000, 10000, 20000) and grid.writers == (2,)
    assert grid.intervals == (2, 4)
    s = point_scenario(base, grid, 20000, Config(3, 4.0))
    assert s.source.rate.rows_per_s == 20000 and s.engine.writers == 3
    assert s.engine.checkpoint_interval_s == 4.0 and (s.warmup_s, s.duration_s) == (5, 20)


def test_grid_options_parse_with_clear_errors() -> None:
    grid = CapacityGrid.parse(rates="1000, 2000", writers="1,2", intervals="0.5", users="")
    assert grid.rates == (1000.0, 2000.0) and grid.writers == (1, 2) and grid.users == ()
    assert CapacityGrid.parse().users == (1, 2, 4, 8)
    with pytest.raises(ValueError, match="--rates: expected comma-separated numbers"):
        CapacityGrid.parse(rates="fast")
    with pytest.raises(ValueError, match="--writers: expected positive numbers"):
        CapacityGrid.parse(writers="0")


def test_run_capacity_writes_json_and_a_report(tmp_path: Path, monkeypatch) -> None:
    limit = 12000

    def fake_run(scenario, out, variant, quiet):
        rate = scenario.source.rate.rows_per_s
        root = Path(out) / f"{scenario.name}-{variant}"
        root.mkdir(parents=True)
        ok = rate <= limit
        result = _result(3.0 if ok else 30.0, 0.0 if ok else rate - limit)
        return SimpleNamespace(paths=SimpleNamespace(root=root), result=result)

    monkeypatch.setattr(capacity, "run_scenario", fake_run)
    grid = CapacityGrid(rates=(5000, 10000, 20000), intervals=(2,), users=())
    result = run_capacity(_scenario(), tmp_path, quiet=True, grid=grid)
    assert result.exit_code == 0 and result.best is not None and result.best.rate == 10000
    assert (result.out_dir / "capacity.json").exists()
    html = render_capacity(result.out_dir).read_text()
    assert "At most 10,000 rows/s with checkpoint interval 2 s" in html
    assert "freshness p99 3.0 s (SLO 10 s) and no growing backlog." in html
    assert html.count("<svg") == 3 and "http://" not in html
    assert "The contention measurement was not run." in html
