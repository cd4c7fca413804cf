"""Rate shapes produce the rows they promise."""

import pytest

from harness.pipeline.rates import rate_law


def test_constant_rate_integrates_linearly():
    law = rate_law({"shape": "constant", "rows_per_s": 1000}, run_s=60)
    assert law.available(0) == 0
    assert law.available(2.5) == 2500
    assert law.next_offset(100, 1.0) == 1000


def test_steps_hold_each_rate_until_the_next_step():
    law = rate_law(
        {
            "shape": "steps",
            "steps": [{"at_s": 0, "rows_per_s": 100}, {"at_s": 10, "rows_per_s": 1000}],
        },
        run_s=60,
    )
    assert law.available(10) == 1000
    assert law.available(12) == 1000 + 2000


def test_nothing_before_the_first_step():
    law = rate_law({"shape": "steps", "steps": [{"at_s": 5, "rows_per_s": 10}]}, run_s=60)
    assert law.available(5) == 0
    assert law.available(6) == 10


def test_ramp_integrates_the_triangle_then_holds():
    law = rate_law(
        {"shape": "ramp", "from_rows_per_s": 0, "to_rows_per_s": 100, "duration_s": 10}, run_s=60
    )
    assert law.available(10) == 500  # area of the triangle
    assert law.available(12) == 700


def test_ramp_without_duration_spans_the_run():
    law = rate_law({"shape": "ramp", "from_rows_per_s": 100, "to_rows_per_s": 100}, run_s=20)
    assert law.available(20) == 2000


def test_spike_adds_the_peak_only_inside_its_window():
    law = rate_law(
        {
            "shape": "spike",
            "base_rows_per_s": 10,
            "peak_rows_per_s": 110,
            "at_s": 5,
            "duration_s": 2,
        },
        run_s=60,
    )
    assert law.available(5) == 50
    assert law.available(7) == 50 + 220
    assert law.available(10) == 50 + 220 + 30


def test_unbounded_takes_a_fixed_batch_whatever_the_time():
    law = rate_law({"shape": "unbounded", "rows_per_batch": 500}, run_s=60)
    assert law.unbounded
    assert law.next_offset(1000, 0.0) == 1500


@pytest.mark.parametrize("t", [0.5, 3.0, 17.25])
def test_next_offset_never_goes_back(t):
    law = rate_law({"shape": "constant", "rows_per_s": 10}, run_s=60)
    assert law.next_offset(10_000, t) == 10_000
