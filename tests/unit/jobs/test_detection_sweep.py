"""The detection sweep (scenarios/suites/detection-sweep.yaml) cannot silently shrink: it
covers every detection scenario with its switch off (invalid) and on (valid), every
coordinator_crash and writer_crash point, one and several dropped ACKs, and clock skews
smaller and larger than a checkpoint interval. And a suite entry's `expect` decides the
nightly exit code."""

from pathlib import Path
from typing import Any, get_args

import pytest

from harness.jobs.nightly import RunRecord
from harness.jobs.suite import Suite, SuiteEntry, SuiteError, load_suite
from harness.scenario.faults import CoordinatorCrash, WriterCrash
from harness.scenario.system import NOT_THE_ENGINE_S

SCENARIOS = Path(__file__).parents[3] / "scenarios"
SWEEP = SCENARIOS / "suites" / "detection-sweep.yaml"
DETECT = sorted(p.resolve() for p in (SCENARIOS / "detect").glob("*.yaml"))


@pytest.fixture(scope="module")
def sweep() -> Suite:
    return load_suite(SWEEP)


def _switched_off(entry: SuiteEntry) -> set[str]:
    return {k for k, on in entry.scenario.engine.safety.model_dump().items() if not on}


def _faults(entry: SuiteEntry, kind: str) -> list[Any]:
    return [f for f in entry.scenario.faults if f.kind == kind]


def _expecting(sweep: Suite, verdict: str) -> list[SuiteEntry]:
    return [e for e in sweep.entries if e.expect is not None and e.expect.verdict == verdict]


def test_every_detection_scenario_is_swept_off_and_on(sweep: Suite) -> None:
    assert DETECT, "no detection scenarios found"
    for scenario in DETECT:
        runs = [e for e in sweep.entries if e.file == scenario]
        off = [e for e in runs if e.expect and e.expect.verdict == "invalid"]
        on = [e for e in runs if e.expect and e.expect.verdict == "valid"]
        assert off and on, f"{scenario.name}: needs runs expecting invalid and valid"
        for e in off:
            assert _switched_off(e), f"{e.id}: expects invalid with every switch on"
            assert e.expect and e.expect.checks, f"{e.id}: name the check that must fail"
        for e in on:
            assert not _switched_off(e), f"{e.id}: expects valid with a switch off"
        # Each switch-off run has its switch-on twin: the same fault, the switch back on.
        faults_off = sorted(repr(e.scenario.faults) for e in off)
        assert faults_off == sorted(repr(e.scenario.faults) for e in on), scenario.name


def test_every_expectation_is_set() -> None:
    # Every entry says what it expects, so no run's verdict is judged by default.
    assert all(e.expect is not None for e in load_suite(SWEEP).entries)


@pytest.mark.parametrize("verdict", ["invalid", "valid"])
def test_a_coordinator_crash_at_every_point(sweep: Suite, verdict: str) -> None:
    points = {f.point for e in _expecting(sweep, verdict) for f in _faults(e, "coordinator_crash")}
    every = set(get_args(CoordinatorCrash.model_fields["point"].annotation))
    assert points == every - set(NOT_THE_ENGINE_S)  # mid_retry is Hudi's
    assert "after_spark_commit_before_ack" in points


def test_a_writer_crash_at_every_point(sweep: Suite) -> None:
    points = {f.point for e in sweep.entries for f in _faults(e, "writer_crash")}
    assert points == set(get_args(WriterCrash.model_fields["point"].annotation))


def test_one_and_several_dropped_acks_without_subsumption(sweep: Suite) -> None:
    counts = {
        f.count
        for e in _expecting(sweep, "invalid")
        if "subsume_acks" in _switched_off(e)
        for f in _faults(e, "drop_ack")
    }
    assert 1 in counts and max(counts) >= 3


def test_clock_steps_smaller_and_larger_than_a_checkpoint_interval(sweep: Suite) -> None:
    steps = [
        (abs(f.offset_ms or f.jump_ms) / 1000, e.scenario.engine.checkpoint_interval_s)
        for e in _expecting(sweep, "invalid")
        if "strict_monotonic" in _switched_off(e)
        for f in _faults(e, "clock_skew")
        if (f.offset_ms or f.jump_ms)
    ]
    assert any(step < interval for step, interval in steps)
    assert any(step > interval for step, interval in steps)
    assert any(f.jump_ms for e in sweep.entries for f in _faults(e, "clock_skew"))


def _entry(tmp_path: Path, expect: str) -> SuiteEntry:
    path = tmp_path / "s.yaml"
    smoke = SCENARIOS / "detect" / "subsume-acks.yaml"
    path.write_text(f"name: s\nscenarios:\n  - scenario: {smoke}\n    expect: {expect}\n")
    (entry,) = load_suite(path).entries
    return entry


def _result(verdict: str, **checks: str) -> dict[str, Any]:
    return {"verdict": verdict, "checks": {k: {"verdict": v} for k, v in checks.items()}}


def test_an_expectation_decides_the_exit_code(tmp_path: Path) -> None:
    entry = _entry(tmp_path, "{verdict: invalid, checks: [exactly_once]}")
    caught = _result("invalid", exactly_once="invalid")
    missed = _result("valid", exactly_once="valid")
    assert entry.missed(caught) is None
    assert entry.missed(missed) == "expected invalid, got valid"

    def record(result: dict[str, Any]) -> RunRecord:
        return RunRecord(
            "s", "scenario", "r", result["verdict"], expect="invalid", missed=entry.missed(result)
        )

    assert record(caught).exit_code == 0
    assert record(missed).exit_code == 1
    assert record(_result("unknown", exactly_once="unknown")).exit_code == 2
    # No expectation: the verdict alone, as before.
    assert RunRecord("s", "scenario", "r", "invalid").exit_code == 1


def test_an_expected_check_must_reach_the_verdict_itself(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    bank = SCENARIOS / "detect" / "occ.yaml"
    path.write_text(
        f"name: s\nscenarios:\n  - scenario: {bank}\n"
        "    expect: {verdict: invalid, checks: [bank]}\n"
    )
    (entry,) = load_suite(path).entries
    other = _result("invalid", bank="valid", exactly_once="invalid")
    assert entry.missed(other) == "expected invalid from bank: valid"


@pytest.mark.parametrize(
    ("expect", "key"),
    [
        ("{verdict: invalid, checks: [bank]}", "expect.checks: bank not among"),
        ("{verdict: broken}", "expect.verdict"),
        ("{verdict: invalid, check: [exactly_once]}", "expect.check"),
    ],
)
def test_a_bad_expectation_names_the_key(tmp_path: Path, expect: str, key: str) -> None:
    with pytest.raises(SuiteError) as info:
        _entry(tmp_path, expect)
    assert "s.yaml" in str(info.value) and key in str(info.value)
