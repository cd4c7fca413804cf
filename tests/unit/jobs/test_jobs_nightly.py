"""The nightly job without Spark: synthetic nights through record_night, the store, the
detector and the trend page. A slowed storage layer shows as a 3x commit latency."""

from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from harness.jobs.nightly import RunRecord, record_night
from harness.jobs.store import ResultsStore
from harness.jobs.suite import Suite, load_suite
from reports.nightly_report import render_nightly

QUICK = Path(__file__).parents[3] / "scenarios" / "suites" / "quick.yaml"
T0 = datetime(2026, 1, 1, 3, 0)

# A smoke run's metrics on this machine (rounded from a real run).
NORMAL = {
    "throughput_rows_per_s.mean": 10000.0,
    "throughput_rows_per_s.p5": 9990.0,
    "stalls.total_s": 0.0,
    "writer_blocked_ms_per_s.mean": 2.0,
    "instant_request_ms.p50": 25.0,
    "commit_latency_ms.p50": 25.0,
    "commit_latency_ms.p99": 30.0,
    "freshness_s.mean": 1.8,
    "freshness_s.p99": 2.3,
    "backlog_rows.max": 24000.0,
    "rows_committed": 200000.0,
}
# What a storage layer slowed 200 ms per operation does to it: commits take ~3x (and more).
SLOW = {
    "commit_latency_ms.p50": 80.0,
    "commit_latency_ms.p99": 95.0,
    "freshness_s.mean": 5.5,
    "freshness_s.p99": 7.0,
}


def _night(seed: int, slow: bool = False, verdict: str = "valid") -> list[RunRecord]:
    rng = np.random.default_rng(seed)
    metrics = {
        k: v * rng.lognormal(0, 0.08) for k, v in {**NORMAL, **(SLOW if slow else {})}.items()
    }
    bench = {"median": 0.002 * rng.lognormal(0, 0.05), "rounds": 100.0}
    return [
        RunRecord("smoke", "scenario", f"smoke-{seed}", verdict, metrics=metrics),
        RunRecord("tests/bench.py::test_commit", "benchmark", f"b-{seed}", "valid", metrics=bench),
    ]


def _record(suite: Suite, store: Path, night: int, runs: list[RunRecord]):
    night_id = f"quick-{night:03d}"
    return record_night(
        suite, store, night_id, T0 + timedelta(days=night), runs, store / "nights" / night_id
    )


def test_a_second_run_on_unchanged_code_reports_no_regression(tmp_path: Path) -> None:
    suite = load_suite(QUICK)
    first = _record(suite, tmp_path, 0, _night(0))
    second = _record(suite, tmp_path, 1, _night(0, slow=True))  # even a big change: too early
    assert first.exit_code == second.exit_code == 0
    assert {f.status for f in second.findings} == {"short_history"}


def test_steady_nights_stay_green_and_a_slowed_storage_layer_is_caught(tmp_path: Path) -> None:
    suite = load_suite(QUICK)
    for night in range(8):
        result = _record(suite, tmp_path, night, _night(night))
        assert result.exit_code == 0, [f for f in result.findings if f.status == "regression"]
    slowed = _record(suite, tmp_path, 8, _night(8, slow=True))
    assert slowed.exit_code == 1
    regressed = {f.metric for f in slowed.regressions}
    assert regressed == {"commit_latency_ms.p50", "freshness_s.mean"}
    assert all(f.series == "smoke" and f.n_history == 8 for f in slowed.regressions)
    # Everything is in the store, queryable with SQL, findings included.
    rows = ResultsStore(tmp_path).query(
        "SELECT night_id, value FROM findings WHERE status = 'regression' "
        "AND metric = 'commit_latency_ms.p50'"
    )
    assert [r["night_id"] for r in rows] == ["quick-008"]
    benches = ResultsStore(tmp_path).query(
        "SELECT count(*) AS n FROM metrics WHERE kind = 'benchmark' AND metric = 'median'"
    )
    assert benches == [{"n": 9}]


def test_the_trend_page_marks_the_regression(tmp_path: Path) -> None:
    suite = load_suite(QUICK)
    for night in range(6):
        _record(suite, tmp_path, night, _night(night))
    slowed = _record(suite, tmp_path, 6, _night(6, slow=True))
    html = render_nightly(slowed.out_dir).read_text()
    assert "<svg" in html and "http://" not in html and "https://" not in html
    assert html.count('class="trend regression"') == len(slowed.regressions) == 2
    assert "commit_latency_ms.p50" in html and 'class="verdict v-regression"' in html


def test_invalid_and_unknown_verdicts_set_the_exit_code(tmp_path: Path) -> None:
    suite = load_suite(QUICK)
    assert _record(suite, tmp_path, 0, _night(0, verdict="invalid")).exit_code == 1
    assert _record(suite, tmp_path, 1, _night(1, verdict="unknown")).exit_code == 2
    # Neither counts as history: a later night still has none to be judged against.
    later = _record(suite, tmp_path, 2, _night(2))
    assert {f.n_history for f in later.findings if f.series == "smoke"} == {0}


def _decisions(night: int, blocked: str, verdict: str = "valid") -> RunRecord:
    from harness.jobs.nightly_compare import DECISION_CODES

    metrics = {
        "writer_blocked_ms_per_s.mean": DECISION_CODES[blocked],
        "freshness_s.p99": DECISION_CODES["same"],
    }
    return RunRecord("bva/decisions", "decision", f"bva-{night}", verdict, metrics=metrics)


def test_a_comparison_decision_that_changes_is_flagged_like_a_regression(tmp_path: Path) -> None:
    suite = load_suite(QUICK)
    first = _record(suite, tmp_path, 0, [_decisions(0, "better")])
    assert {f.status for f in first.findings} == {"short_history"}
    steady = _record(suite, tmp_path, 1, [_decisions(1, "better")])
    assert {f.status for f in steady.findings} == {"ok"} and steady.exit_code == 0
    unknown = _record(suite, tmp_path, 2, [_decisions(2, "worse", verdict="unknown")])
    assert unknown.findings == []  # a comparison with a failed run decided nothing
    changed = _record(suite, tmp_path, 3, [_decisions(3, "undecided")])
    [flag] = changed.regressions
    assert (flag.series, flag.metric) == ("bva/decisions", "writer_blocked_ms_per_s.mean")
    assert (flag.baseline, flag.value) == (2.0, 0.0) and changed.exit_code == 1


def test_a_compare_entry_records_its_runs_and_its_decisions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.jobs import nightly_compare
    from harness.jobs.compare import Comparison, PairTable
    from harness.jobs.suite import SuiteEntry
    from harness.runner.rundir import RunOutcome, RunPaths
    from harness.scenario import load_scenario

    main = Path(__file__).parents[3] / "scenarios" / "blocking-vs-async.yaml"
    scenario = load_scenario(main)

    def run_comparison(scenario, runs_dir, quiet, on_run):
        assert quiet  # the night's display is on the terminal already
        runs = {
            v: [
                RunOutcome(
                    RunPaths(tmp_path / v, tmp_path / "t"), {"run_id": v, "verdict": "valid"}
                )
            ]
            for v in ("blocking", "async")
        }
        row = {"metric": "freshness_s.p99", "n_pairs": 3, "delta_pct": -30.0, "verdict": "better"}
        rows = [row, {**row, "metric": "writer_blocked_ms_per_s.mean"}]
        tables = [PairTable(a="blocking", b="async", rows=rows)]
        return Comparison(tmp_path / "cmp", ["blocking", "async"], runs, tables)

    monkeypatch.setattr(nightly_compare, "run_comparison", run_comparison)
    entry = SuiteEntry("bva", main, (), 1, scenario, compare=True)
    records = nightly_compare.run_compare_entry(entry, tmp_path, None)
    assert [r.series for r in records] == ["bva/blocking", "bva/async", "bva/decisions"]
    decisions = records[-1]
    assert decisions.kind == "decision" and decisions.verdict == "valid"
    assert decisions.metrics == {"freshness_s.p99": 2.0, "writer_blocked_ms_per_s.mean": 2.0}


def test_a_compare_entry_needs_a_comparison_to_run(tmp_path: Path) -> None:
    from harness.jobs.suite import SuiteError

    suite = tmp_path / "s.yaml"
    main = Path(__file__).parents[3] / "scenarios"
    suite.write_text(f"name: s\nscenarios:\n  - scenario: {main}/smoke.yaml\n    compare: true\n")
    with pytest.raises(SuiteError, match=r"scenarios\.0\.compare: a comparison needs"):
        load_suite(suite)
