"""A/B comparison: delta%, Mann-Whitney U, verdict by direction and thresholds."""

import pytest

from harness.metrics import compare, compare_runs

LOW = [100, 101, 99, 100, 102, 98]
HIGH = [120, 121, 119, 122, 118, 120]


def test_a_clear_increase_is_better_when_higher_is_better() -> None:
    r = compare(LOW, HIGH, direction="higher")
    assert r["a"] == 100 and r["b"] == 120
    assert r["delta_pct"] == pytest.approx(20.0)
    assert r["p_value"] < 0.01
    assert r["verdict"] == "better"


def test_the_same_increase_is_worse_when_lower_is_better() -> None:
    assert compare(LOW, HIGH, direction="lower")["verdict"] == "worse"


def test_a_small_change_is_the_same_even_if_significant() -> None:
    r = compare(LOW, [103, 104, 102, 103, 105, 101])
    assert r["p_value"] < 0.05 and abs(r["delta_pct"]) < 5
    assert r["verdict"] == "same"


def test_thresholds_are_parameters() -> None:
    slightly = [103, 104, 102, 103, 105, 101]
    assert compare(LOW, slightly, min_delta_pct=2.0)["verdict"] == "better"
    assert compare(LOW, HIGH, alpha=1e-6)["verdict"] == "same"


def test_a_large_change_with_too_few_samples_is_the_same() -> None:
    r = compare([100], [200])
    assert r["delta_pct"] == 100 and r["p_value"] >= 0.05 and r["verdict"] == "same"


def test_identical_samples() -> None:
    r = compare([5, 5, 5], [5, 5, 5])
    assert (r["delta_pct"], r["p_value"], r["verdict"]) == (0.0, 1.0, "same")


def test_from_zero_the_p_value_decides() -> None:
    r = compare([0, 0, 0, 0, 0], [3, 4, 5, 6, 7], direction="lower")
    assert r["delta_pct"] is None and r["verdict"] == "worse"


def test_missing_samples_give_no_verdict() -> None:
    r = compare([], [1.0, None])  # type: ignore[list-item]
    assert (r["a"], r["b"], r["p_value"], r["verdict"]) == (None, 1.0, None, "same")


def test_compare_runs_reads_dotted_metrics() -> None:
    a = [{"throughput_rows_per_s": {"p5": v}} for v in LOW]
    b = [{"throughput_rows_per_s": {"p5": v}} for v in HIGH]
    out = compare_runs(a, b, {"throughput_rows_per_s.p5": "higher", "stalls.count": "lower"})
    assert out["throughput_rows_per_s.p5"]["verdict"] == "better"
    assert out["stalls.count"]["a"] is None
