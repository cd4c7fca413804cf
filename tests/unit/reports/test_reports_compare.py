"""render_comparison over hand-made runs of two variants."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.history import read_events
from harness.jobs.compare import table_rows
from harness.metrics import CompareParams, compare_runs, run_samples
from reports import render_comparison


def runs(make_run: Callable[..., Path], n: int = 3) -> dict[str, list[Path]]:
    """n repetitions per variant (pairs: the i-th of each)."""
    return {
        mode: [make_run(mode, f"bva-{mode}-{i}") for i in range(n)]
        for mode in ("blocking", "async")
    }


def table_of(by_variant: dict[str, list[Path]]) -> list[dict]:
    samples = [
        [run_samples(read_events(d / "history")) for d in dirs] for dirs in by_variant.values()
    ]
    return table_rows(compare_runs(*samples, params=CompareParams(resamples=200)))


def test_comparison_page_has_the_paired_table_and_charts(
    make_run: Callable[..., Path], tmp_path: Path
) -> None:
    by_variant = runs(make_run)
    out = render_comparison(by_variant, tmp_path / "compare", table_of(by_variant))
    html = out.read_text()
    assert out.name == "compare.html"
    assert "Is async smoother than blocking?" in html
    assert "A: blocking" in html and "B: async" in html
    assert "writer_blocked_ms_per_s.mean" in html and "-100.0% [-100.0, -100.0]" in html
    assert '<span class="verdict v-better small">better</span>' in html
    assert html.count("<svg") == 4  # deltas with intervals, and three over the runs
    assert "http://" not in html and "https://" not in html
    assert 'href="../bva-async-0/report.html"' in html  # each run links to its own report
    md = (out.parent / "compare.md").read_text()
    assert "| metric | A: blocking | B: async | delta% [95% interval] | q (BH) | verdict |" in md
    assert "| writer_blocked_ms_per_s.mean | 1,320 | 0 | -100.0% [-100.0, -100.0] |" in md


def test_table_rows_may_use_the_column_titles(
    make_run: Callable[..., Path], tmp_path: Path
) -> None:
    row = {
        "metric": "throughput_rows_per_s.cv",
        "A": 0.4,
        "B": 0.1,
        "delta%": -75.0,
        "p": 0.008,
        "verdict": "better",
    }
    out = render_comparison(runs(make_run, 1), tmp_path / "c", [row])
    md = (out.parent / "compare.md").read_text()
    assert "| throughput_rows_per_s.cv | 0.4 | 0.1 | -75.0% | 0.008 | BETTER |" in md


def test_an_interval_from_zero_is_the_difference_itself(
    make_run: Callable[..., Path], tmp_path: Path
) -> None:
    row = {
        "metric": "stalls.total_s",
        "a": 0.0,
        "b": 4.0,
        "delta_pct": None,
        "diff": 4.0,
        "ci_diff": [2.0, 6.0],
        "q_value": 0.01,
        "verdict": "worse",
    }
    out = render_comparison(runs(make_run, 1), tmp_path / "c", [row])
    md = (out.parent / "compare.md").read_text()
    assert "| stalls.total_s | 0 | 4 | +4 [2, 6] from 0 | 0.01 | WORSE |" in md


def test_runs_without_history_are_listed_not_charted(
    make_run: Callable[..., Path], failed_run: Path, tmp_path: Path
) -> None:
    by_variant = {"blocking": [failed_run, tmp_path / "missing"], "async": [make_run("async")]}
    html = render_comparison(by_variant, tmp_path / "c", []).read_text()
    assert "No metrics to compare." in html
    assert "did not end valid" in html and "smoke-20231114T220000" in html
    assert html.count("<svg") == 3  # the async run still charts (no deltas chart: no table)


def test_a_run_whose_instant_mode_was_forced_is_flagged(
    make_run: Callable[..., Path], tmp_path: Path
) -> None:
    by_variant = runs(make_run, 1)
    forced = by_variant["async"][0]
    result = json.loads((forced / "result.json").read_text())
    result["environment"]["instant_mode"] = {"requested": "async", "effective": "blocking"}
    (forced / "result.json").write_text(json.dumps(result))
    html = render_comparison(by_variant, tmp_path / "c", []).read_text()
    assert "asked for async instant generation but ran blocking" in html
    assert f"<code>{forced.name}</code>" in html
    md = (tmp_path / "c" / "compare.md").read_text()
    assert "1 run(s) asked for async" in md
    clean = render_comparison(runs(make_run, 1), tmp_path / "d", []).read_text()
    assert "ran blocking" not in clean


def test_the_compare_job_interleaves_pairs_and_writes_intervals(
    make_run: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """run_comparison without Spark: each run is a synthetic run directory."""
    import harness.jobs.compare as job
    from harness.runner.run import RunOutcome
    from harness.runner.rundir import RunPaths
    from harness.scenario import load_scenario

    order: list[str] = []

    def fake_run(scenario, runs_dir, variant, quiet):
        order.append(variant)
        root = make_run(variant.removeprefix("instant-mode-"), f"{variant}-{len(order)}")
        return RunOutcome(
            RunPaths(root, root / "table"), json.loads((root / "result.json").read_text())
        )

    monkeypatch.setattr(job, "run_scenario", fake_run)
    scenario = load_scenario(Path(__file__).parents[3] / "scenarios" / "blocking-vs-async.yaml")
    result = job.run_comparison(
        scenario, tmp_path / "out", repeat=3, params=CompareParams(resamples=200)
    )
    assert order == ["instant-mode-blocking", "instant-mode-async"] * 3
    saved = json.loads((result.out_dir / "compare.json").read_text())
    blocked = next(r for r in saved["table"] if r["metric"] == "writer_blocked_ms_per_s.mean")
    assert blocked["n_pairs"] == 3 and blocked["verdict"] == "better"
    assert blocked["ci_pct"] == [-100.0, -100.0] and blocked["q_value"] < 0.05
    assert saved["statistics"]["resamples"] == 200
