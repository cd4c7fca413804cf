"""render_comparison over hand-made runs of two variants."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.history import read_events
from harness.jobs.compare import table_rows
from harness.metrics import CompareParams, compare_variants, run_samples
from harness.runner.rundir import RunOutcome, RunPaths
from reports import render_comparison

SMOKE = Path(__file__).resolve().parents[3] / "scenarios" / "smoke.yaml"


def runs(make_run: Callable[..., Path], n: int = 3) -> dict[str, list[Path]]:
    """n repetitions per variant (pairs: the i-th of each)."""
    return {
        mode: [make_run(mode, f"bva-{mode}-{i}") for i in range(n)]
        for mode in ("blocking", "async")
    }


def tables_of(by_variant: dict[str, list[Path]]) -> list[dict]:
    """compare.json's tables: every pair of variants, B against A."""
    samples = {
        v: [run_samples(read_events(d / "history")) for d in dirs] for v, dirs in by_variant.items()
    }
    pairs = list(itertools.combinations(by_variant, 2))
    results = compare_variants(samples, pairs, params=CompareParams(resamples=200))
    return [
        {"a": a, "b": b, "rows": table_rows(stats)}
        for (a, b), stats in zip(pairs, results, strict=True)
    ]


def one_pair(rows: list[dict]) -> list[dict]:
    return [{"a": "blocking", "b": "async", "rows": rows}]


def test_comparison_page_has_the_paired_table_and_charts(
    make_run: Callable[..., Path], tmp_path: Path
) -> None:
    by_variant = runs(make_run)
    out = render_comparison(by_variant, tmp_path / "compare", tables_of(by_variant))
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
    out = render_comparison(runs(make_run, 1), tmp_path / "c", one_pair([row]))
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
    out = render_comparison(runs(make_run, 1), tmp_path / "c", one_pair([row]))
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
    main = Path(__file__).parents[3] / "scenarios" / "blocking-vs-async.yaml"
    scenario = load_scenario(main, ["source.rate.ceiling_rows_per_s=30000"])  # nothing to measure
    result = job.run_comparison(
        scenario, tmp_path / "out", repeat=3, params=CompareParams(resamples=200)
    )
    assert order == ["instant-mode-blocking", "instant-mode-async"] * 3
    saved = json.loads((result.out_dir / "compare.json").read_text())
    blocked = next(r for r in saved["table"] if r["metric"] == "writer_blocked_ms_per_s.mean")
    assert blocked["n_pairs"] == 3 and blocked["verdict"] == "better"
    assert blocked["ci_pct"] == [-100.0, -100.0] and blocked["q_value"] < 0.05
    assert saved["statistics"]["resamples"] == 200


def test_three_variants_have_a_table_and_a_deltas_chart_per_pair(
    make_run: Callable[..., Path], tmp_path: Path
) -> None:
    by_variant = {
        name: [make_run(mode, f"x-{name}-{i}") for i in range(3)]
        for name, mode in (("blocking", "blocking"), ("async", "async"), ("again", "async"))
    }
    out = render_comparison(by_variant, tmp_path / "c", tables_of(by_variant))
    html = out.read_text()
    assert "Which of blocking, async and again is smoother?" in html
    for a, b in (("blocking", "async"), ("blocking", "again"), ("async", "again")):
        assert f"<h2>{b} against {a}</h2>" in html
        assert f"<th>A: {a}</th><th>B: {b}</th>" in html
    assert html.count("<svg") == 6  # three pairs' deltas, and three over the runs
    md = (out.parent / "compare.md").read_text()
    assert md.count("| metric | A: ") == 3 and "## again against async" in md


def test_the_compare_job_interleaves_three_variants_and_writes_every_pair(
    make_run: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.jobs import compare
    from harness.runner.rundir import RunOutcome, RunPaths
    from harness.scenario import load_scenario

    order: list[str] = []

    def run_scenario(scenario, out, variant, quiet):  # a finished synthetic run per call
        order.append(variant)
        root = make_run(scenario.engine.instant_mode, f"{variant}-{len(order)}")
        return RunOutcome(
            RunPaths(root, root / "table"), json.loads((root / "result.json").read_text())
        )

    monkeypatch.setattr(compare, "run_scenario", run_scenario)
    points = "[{engine.instant_mode: blocking}, {engine.instant_mode: async}, {engine.writers: 3}]"
    scenario = load_scenario(SMOKE, [f"matrix={points}"])
    # 2000 resamples (the default): with 200 the smallest p-value, 2/201, cannot survive BH
    # across the three pairs' 45 metrics.
    result = compare.run_comparison(scenario, tmp_path, repeat=3, quiet=True)
    names = ["instant-mode-blocking", "instant-mode-async", "writers-3"]
    assert order == names * 3
    saved = json.loads((result.out_dir / "compare.json").read_text())
    assert [(t["a"], t["b"]) for t in saved["tables"]] == [
        (names[0], names[1]),
        (names[0], names[2]),
        (names[1], names[2]),
    ]
    assert saved["table"] == saved["tables"][0]["rows"]  # two-variant readers keep working
    blocked = {r["metric"]: r for r in saved["tables"][0]["rows"]}["writer_blocked_ms_per_s.mean"]
    assert blocked["verdict"] == "better"  # async against blocking, as in the two-way page


def _synthetic_runs(make_run: Callable[..., Path], order: list[str]):
    def run_scenario(scenario, out, variant, quiet):  # a finished synthetic run per call
        order.append(variant)
        root = make_run(scenario.engine.instant_mode, f"{variant}-{len(order)}")
        return RunOutcome(
            RunPaths(root, root / "table"), json.loads((root / "result.json").read_text())
        )

    return run_scenario


def test_a_sequential_comparison_stops_once_its_metrics_are_decided(
    make_run: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.jobs import compare
    from harness.scenario import load_scenario

    order: list[str] = []
    monkeypatch.setattr(compare, "run_scenario", _synthetic_runs(make_run, order))
    decide = "compare={decide: [writer_blocked_ms_per_s.mean, instant_request_ms.p99]}"
    scenario = load_scenario(SMOKE, ["matrix={engine.instant_mode: [blocking, async]}", decide])
    result = compare.run_comparison(scenario, tmp_path, repeat=8, quiet=True)
    assert len(order) == 6  # three pairs: both decided at the first look
    saved = json.loads((result.out_dir / "compare.json").read_text())
    stats = saved["statistics"]
    assert stats["looks_planned"] == 6 and stats["alpha"] == pytest.approx(0.05 / 6)
    assert stats["stopped"] == "every metric to decide is decided after 3 pairs"
    texts = {c["metric"]: c for c in saved["conclusions"]}
    assert texts["writer_blocked_ms_per_s.mean"]["decision"] == "better"
    assert (
        "B is better, -100.0% [-100.0, -100.0] (99.17% interval, 3 pairs)"
        in (texts["writer_blocked_ms_per_s.mean"]["text"])
    )
    page = render_comparison(
        {v: [o.paths.root for o in outs] for v, outs in result.runs.items()},
        result.out_dir,
        result.tables,
    ).read_text()
    assert "The headline metrics" in page and "delta% [99.17% interval]" in page


def test_an_undecided_comparison_runs_until_its_budget_and_says_why(
    make_run: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.jobs import compare
    from harness.scenario import load_scenario

    order: list[str] = []
    monkeypatch.setattr(compare, "run_scenario", _synthetic_runs(make_run, order))
    undecidable = "throughput_rows_per_s.mean"  # the same in both modes, noisy in each run
    plan = f"compare={{decide: [{undecidable}], budget_s: 0.001}}"
    scenario = load_scenario(SMOKE, ["matrix={engine.instant_mode: [blocking, async]}", plan])
    result = compare.run_comparison(scenario, tmp_path, repeat=8, quiet=True)
    assert len(order) == 6 and result.undecided == [
        f"instant-mode-async vs instant-mode-blocking: {undecidable}"
    ]
    assert result.stopped == "3 pairs: another would end past the budget of 0.001 s"
    [line] = result.conclusions([undecidable])
    assert line["decision"] == "undecided" and "holds both no change and a change" in line["text"]
