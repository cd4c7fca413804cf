"""A/B comparison: the hierarchical block bootstrap, its intervals, Benjamini-Hochberg and
the verdicts, on synthetic runs whose answer is known (deterministic: fixed seeds)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import false_discovery_control

from harness.jobs.compare import unmeasured
from harness.metrics import (
    COMPARED,
    DIRECTIONS,
    CompareParams,
    MetricParams,
    compare_runs,
    compare_variants,
    compute_metrics,
    metric_at,
    run_samples,
)
from harness.metrics.resample import STATISTICS, Weighted, block_counts
from harness.metrics.samples import RunSamples, Samples

SECONDS = 60
FAST = CompareParams(resamples=500)


def ar1(rng: np.random.Generator, n: int, sd: float, phi: float) -> np.ndarray:
    """Autocorrelated noise: each second keeps phi of the previous one's deviation."""
    noise = rng.normal(0.0, sd * np.sqrt(1 - phi**2), n)
    out = np.empty(n)
    out[0] = rng.normal(0.0, sd)
    for i in range(1, n):
        out[i] = phi * out[i - 1] + noise[i]
    return out


def run(
    rng: np.random.Generator, level: float, phi: float = 0.7, run_sd: float = 0.05
) -> RunSamples:
    """One run: a per-second series around `level` (20% noise, autocorrelated), whose level
    itself varies from run to run by run_sd (the machine is not the same twice)."""
    own_level = level * (1 + rng.normal(0.0, run_sd))
    values = own_level + ar1(rng, SECONDS, 0.2 * level, phi)
    return RunSamples(SECONDS, {"x": Samples(values, np.arange(SECONDS))})


METRICS = {f"x.{s}": ("x", s) for s in ("mean", "p5", "p50", "p99")}
LOWER = {k: "lower" for k in METRICS}


def pairs(seed: int, b_level: float, n: int = 4) -> tuple[list[RunSamples], list[RunSamples]]:
    rng = np.random.default_rng(seed)
    a, b = [], []
    for _ in range(n):  # interleaved, as the compare job runs them
        a.append(run(rng, 1000.0))
        b.append(run(rng, b_level))
    return a, b


@pytest.mark.parametrize("seed", range(3))
def test_thirty_percent_lower_with_noise_is_detected(seed: int) -> None:
    a, b = pairs(seed, 700.0)
    out = compare_runs(a, b, METRICS, FAST, LOWER)
    for key in ("x.mean", "x.p50"):
        r = out[key]
        assert r["verdict"] == "better"
        low, high = r["ci_pct"]
        assert low <= r["delta_pct"] <= high < 0
        assert r["delta_pct"] == pytest.approx(-30, abs=8)
        assert r["q_value"] < 0.05
    higher = compare_runs(a, b, METRICS, FAST, {k: "higher" for k in METRICS})
    assert higher["x.mean"]["verdict"] == "worse"


@pytest.mark.parametrize("seed", range(10))
def test_runs_of_the_same_process_are_not_told_apart(seed: int) -> None:
    a, b = pairs(100 + seed, 1000.0)
    metrics = {**METRICS, "x.cv": ("x", "cv"), "x.floor_ratio": ("x", "floor_ratio")}
    directions = {**LOWER, "x.cv": "lower", "x.floor_ratio": "higher"}
    out = compare_runs(a, b, metrics, FAST, directions)
    assert {r["verdict"] for r in out.values()} == {"same"}


def test_the_same_runs_on_both_sides_give_no_change() -> None:
    a, _ = pairs(7, 1000.0)
    r = compare_runs(a, a, METRICS, FAST, LOWER)["x.mean"]
    low, high = r["ci_pct"]
    assert r["delta_pct"] == 0.0 and low < 0 < high and r["p_value"] > 0.5
    assert r["verdict"] == "same"


def test_false_discoveries_are_controlled_across_many_metrics() -> None:
    """40 null metrics and 3 real ones: the real ones are found, no null one is, and the
    q-values are Benjamini-Hochberg's of the bootstrap p-values."""
    rng = np.random.default_rng(5)
    a_runs, b_runs, metrics = [], [], {}
    a_sources: list[dict] = [{} for _ in range(4)]
    b_sources: list[dict] = [{} for _ in range(4)]
    for m in range(43):
        b_level = 600.0 if m < 3 else 1000.0
        for k in range(4):
            a_sources[k][f"s{m}"] = run(rng, 1000.0).sources["x"]
            b_sources[k][f"s{m}"] = run(rng, b_level).sources["x"]
        metrics[f"m{m}.mean"] = (f"s{m}", "mean")
    a_runs = [RunSamples(SECONDS, s) for s in a_sources]
    b_runs = [RunSamples(SECONDS, s) for s in b_sources]
    # 2000 resamples (the default): the smallest p-value is 2/2001, and BH multiplies it by
    # up to 43/3 here; 500 resamples could not reach q < 0.05 at all.
    out = compare_runs(a_runs, b_runs, metrics, CompareParams(), {k: "lower" for k in metrics})
    flagged = {k for k, r in out.items() if r["verdict"] != "same"}
    assert flagged == {"m0.mean", "m1.mean", "m2.mean"}
    p = [out[k]["p_value"] for k in metrics]
    assert [out[k]["q_value"] for k in metrics] == pytest.approx(false_discovery_control(p))


def test_a_small_change_is_the_same_even_when_certain() -> None:
    a, b = pairs(3, 970.0, n=6)
    quiet = [
        RunSamples(r.n_seconds, {"x": Samples(np.full(SECONDS, lvl), np.arange(SECONDS))})
        for r, lvl in zip(a + b, [1000.0] * 6 + [970.0] * 6, strict=True)
    ]
    r = compare_runs(quiet[:6], quiet[6:], METRICS, FAST, LOWER)["x.mean"]
    assert r["ci_pct"] == [pytest.approx(-3.0), pytest.approx(-3.0)] and r["q_value"] < 0.05
    assert r["verdict"] == "same"  # |delta| < 5%
    loose = CompareParams(resamples=500, min_delta_pct=2.0)
    assert compare_runs(quiet[:6], quiet[6:], METRICS, loose, LOWER)["x.mean"]["verdict"] == (
        "better"
    )


@pytest.mark.parametrize("n", [1, 2])
def test_fewer_than_three_pairs_give_no_interval_and_no_verdict(n: int) -> None:
    a, b = pairs(1, 500.0, n=n)
    r = compare_runs(a, b, METRICS, FAST, LOWER)["x.mean"]
    assert r["n_pairs"] == n and r["delta_pct"] < -30
    assert (r["ci_pct"], r["p_value"], r["verdict"]) == ([None, None], None, "same")


def test_blocks_keep_the_autocorrelation_in_the_interval() -> None:
    """Inside one run, strongly autocorrelated seconds are worth fewer independent samples:
    resampling blocks gives a wider interval than resampling single seconds."""
    a, b = pairs(11, 1000.0, n=1)
    for r in a + b:  # replace the series by a slowly wandering one
        r.sources["x"] = Samples(
            1000 + ar1(np.random.default_rng(3), SECONDS, 200, 0.95), r.sources["x"].second
        )
    width = {}
    for block in (1, 8):
        params = CompareParams(resamples=500, block_s=block, min_pairs=1)
        low, high = compare_runs(a, b, {"x.mean": ("x", "mean")}, params, LOWER)["x.mean"]["ci_pct"]
        width[block] = high - low
    assert width[8] > 1.5 * width[1]


def test_a_change_from_zero_is_judged_on_the_difference() -> None:
    zero = [
        RunSamples(SECONDS, {"x": Samples(np.zeros(SECONDS), np.arange(SECONDS))}) for _ in range(4)
    ]
    _, b = pairs(2, 50.0)
    r = compare_runs(zero, b, {"x.mean": ("x", "mean")}, FAST, LOWER)["x.mean"]
    assert r["a"] == 0 and r["delta_pct"] is None and r["ci_pct"] == [None, None]
    assert 0 < r["ci_diff"][0] <= r["diff"] <= r["ci_diff"][1]
    assert r["verdict"] == "worse"


def test_results_are_reproducible() -> None:
    a, b = pairs(4, 900.0)
    assert compare_runs(a, b, METRICS, FAST, LOWER) == compare_runs(a, b, METRICS, FAST, LOWER)


def test_a_pair_missing_a_metric_is_left_out_of_it() -> None:
    a, b = pairs(6, 700.0)
    a[0] = RunSamples(0, {})  # a failed run: no history
    r = compare_runs(a, b, METRICS, FAST, LOWER)["x.mean"]
    assert r["n_pairs"] == 3 and r["verdict"] == "better"


def test_every_compared_metric_has_a_direction() -> None:
    assert set(COMPARED) <= set(DIRECTIONS)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1e4, 1e4, allow_nan=False), min_size=1, max_size=40))
def test_unit_weights_give_numpys_statistics(values: list[float]) -> None:
    samples = Samples(np.array(values), np.arange(len(values)))
    w = Weighted(samples, np.ones((1, len(values)), int))
    for q in (0.05, 0.5, 0.99):
        assert w.quantile(q)[0] == pytest.approx(np.percentile(values, q * 100), abs=1e-6)
    assert w.mean()[0] == pytest.approx(np.mean(values), abs=1e-6)
    assert w.std()[0] == pytest.approx(np.std(values), abs=1e-4)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(0, 100, allow_nan=False), min_size=1, max_size=20),
    st.lists(st.integers(0, 3), min_size=20, max_size=20),
)
def test_weights_are_repetitions(values: list[float], counts: list[int]) -> None:
    """A second drawn k times counts as its samples k times over."""
    n = len(values)
    samples = Samples(np.array(values), np.arange(n))
    c = np.array(counts[:n])
    if c.sum() == 0:
        return
    repeated = np.repeat(values, c)
    w = Weighted(samples, c[None, :])
    assert w.quantile(0.99)[0] == pytest.approx(np.percentile(repeated, 99), abs=1e-6)
    assert w.mean()[0] == pytest.approx(np.mean(repeated), abs=1e-6)


def test_block_counts_draw_whole_circular_blocks() -> None:
    counts = block_counts(10, 200, np.random.default_rng(0), block=4)
    assert counts.shape == (200, 10) and (counts.sum(axis=1) == 10).all()
    # A block of 4 from 10 seconds, wrapping: second 9 is followed by second 0.
    one = block_counts(10, 1, np.random.default_rng(1), block=10)[0]
    assert (one == 1).all()


def test_a_runs_own_values_are_its_result_json_metrics() -> None:
    """The samples a comparison resamples, each taken once, give the run's metrics."""
    t0, warmup, duration = 1_700_000_000.0, 5, 40
    rng = np.random.default_rng(9)
    events = [
        {
            "t": t0,
            "kind": "run_start",
            "src": "runner",
            "warmup_s": warmup,
            "duration_s": duration,
            "checkpoint_interval_s": 1.0,
        }
    ]
    for i in range(warmup + duration + 1):
        t = t0 + i + rng.uniform(0.3, 0.9)
        events.append(
            {
                "t": t,
                "kind": "commit",
                "rows": float(rng.integers(500, 1500)),
                "latency_ms": float(rng.uniform(10, 300)),
                "max_event_time": t - rng.uniform(0.5, 2.0),
            }
        )
        for task in (0, 1):
            wait = float(rng.uniform(0, 400))
            events.append({"t": t0 + i + 0.1 * task, "kind": "instant_request", "latency_ms": wait})
            events.append({"t": t0 + i + 0.5, "kind": "flush", "task": task, "rows": 500.0 + task})
    events.append({"t": t0 + warmup + duration, "kind": "run_end"})
    metrics = compute_metrics(events)
    samples = run_samples(events, MetricParams())
    for key, (source, statistic) in COMPARED.items():
        s = samples.sources[source]
        own = STATISTICS[statistic](Weighted(s, np.ones((1, samples.n_seconds), int)))[0]
        expected = metric_at(metrics, key)
        assert expected is not None, key
        assert own == pytest.approx(expected, rel=1e-9, abs=1e-9), key


def test_a_series_a_system_does_not_measure_is_left_out_not_counted_as_zero() -> None:
    """Hudi's runs report ingest and writer-blocked time as not measured (null): their
    per-second zeros must not make Hudi "better" at waiting, only "-"."""
    hudi = {"metrics": {"ingest_rows_per_s": {"mean": None, "cv": None}, "freshness_s": {}}}
    engine = {"metrics": {"ingest_rows_per_s": {"mean": 2000.0, "cv": 0.1}}}
    assert unmeasured(hudi) == {"ingest_rows_per_s"}
    assert unmeasured(engine) == set() and unmeasured({}) == set()
    rng = np.random.default_rng(3)
    a = [run(rng, 1000.0) for _ in range(4)]
    b = [RunSamples(r.n_seconds, {}) for r in (run(rng, 0.0) for _ in range(4))]
    r = compare_runs(a, b, METRICS, FAST, LOWER)["x.mean"]
    assert (r["b"], r["verdict"]) == (None, "-")


def test_three_variants_are_compared_in_every_pair_with_one_false_discovery_family() -> None:
    rng = np.random.default_rng(11)
    runs = {"a": [], "b": [], "c": []}
    for _ in range(4):  # interleaved: a, b, c, a, b, c, ...
        for name, level in (("a", 1000.0), ("b", 1000.0), ("c", 600.0)):
            runs[name].append(run(rng, level))
    pairs = [("a", "b"), ("a", "c"), ("b", "c")]
    ab, ac, bc = compare_variants(runs, pairs, METRICS, FAST, LOWER)
    assert ac["x.mean"]["verdict"] == bc["x.mean"]["verdict"] == "better"
    assert {r["verdict"] for r in ab.values()} == {"same"}
    # One family: the q-values are BH's over all twelve p-values, not over each pair's four.
    p = [pair[k]["p_value"] for pair in (ab, ac, bc) for k in METRICS]
    q = [pair[k]["q_value"] for pair in (ab, ac, bc) for k in METRICS]
    assert q == pytest.approx(false_discovery_control(p))
    alone = compare_runs(runs["a"], runs["c"], METRICS, FAST, LOWER)  # the pair by itself
    assert [alone[k]["p_value"] for k in METRICS] == [ac[k]["p_value"] for k in METRICS]
    assert all(ac[k]["q_value"] > alone[k]["q_value"] for k in METRICS)
