"""One verdict-to-exit-code mapping (DESIGN.md "CLI"), used by run, compare, nightly and
capacity."""

from pathlib import Path

from harness.checks.verdict import EXIT_ERROR, exit_code, worst_exit_code
from harness.jobs.capacity import CapacityResult
from harness.jobs.nightly import NightlyResult, RunRecord
from harness.jobs.slo_search import Point


def test_each_verdict_has_its_code_and_anything_else_fails_closed() -> None:
    assert [exit_code(v) for v in ("valid", "invalid", "unknown")] == [0, 1, 2]
    assert exit_code("error") == exit_code("") == EXIT_ERROR


def test_the_worst_verdict_decides_and_empty_is_the_callers_choice() -> None:
    assert worst_exit_code(["valid", "valid"]) == 0
    assert worst_exit_code(["valid", "invalid"]) == 1
    assert worst_exit_code(iter(["invalid", "unknown", "valid"])) == 2
    assert worst_exit_code([]) == 0
    assert worst_exit_code([], empty=EXIT_ERROR) == 2


def _record(verdict: str, expect: str | None = None, missed: str | None = None) -> RunRecord:
    return RunRecord("s", "scenario", "r", verdict, expect=expect, missed=missed)


def test_nightly_uses_the_mapping() -> None:
    night = NightlyResult("n", Path("."), Path("."), [], [])
    assert night.exit_code == 0
    for verdict in ("valid", "invalid", "unknown", "error"):
        night.runs = [_record(verdict)]
        assert night.exit_code == exit_code(verdict)
    # An expected-invalid run counts by its expectation, but unknown still fails closed.
    assert _record("invalid", expect="invalid").exit_code == 0
    assert _record("unknown", expect="invalid").exit_code == 2


def _capacity(*verdicts: str) -> CapacityResult:
    points = [Point(1000.0, 1, 1.0, v, holds=True, reason="") for v in verdicts]
    return CapacityResult(Path("."), points, "", None)


def test_capacity_uses_the_mapping_and_no_points_is_an_error() -> None:
    assert _capacity().exit_code == 2
    assert _capacity("valid", "valid").exit_code == 0
    assert _capacity("valid", "invalid").exit_code == 1
    assert _capacity("invalid", "error").exit_code == 2
