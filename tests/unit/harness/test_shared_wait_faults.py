"""Faults under engine.truetime.shared_wait: a commit's TrueTime wait mints the stream's
instants, so the coordinator's own instant-creation wait is a seam no run reaches after
the first instant. A pause named there is refused; `point: random` never draws it."""

from __future__ import annotations

import pytest

from harness.faults.schedule import expand, parse_fault
from harness.faults.seams import concrete_points
from harness.runner.driver_config import fault_occurrences
from harness.scenario import ScenarioError, validate_scenario

PAUSE = {"kind": "coordinator_pause", "at_s": 5, "duration_s": 9}
# The instant creation's generation record and wait: the commit's shared hold does both.
UNREACHED = ["instant_before_truetime", "instant_truetime_wait"]


def _scenario(point: str, shared_wait: bool):
    return validate_scenario(
        {
            "name": "shared",
            "engine": {"truetime": {"max_skew_ms": 200, "shared_wait": shared_wait}},
            "faults": [{**PAUSE, "point": point}],
        },
        "test",
    )


@pytest.mark.parametrize("point", UNREACHED)
def test_a_pause_in_the_instant_wait_is_refused_with_the_shared_wait(point):
    assert _scenario(point, shared_wait=False).faults
    with pytest.raises(ScenarioError) as info:
        _scenario(point, shared_wait=True)
    (problem,) = info.value.problems
    assert problem.key == "faults.0.point" and "commit_truetime_wait" in problem.message
    assert _scenario("commit_truetime_wait", shared_wait=True).faults
    assert _scenario("instant_before_requested", shared_wait=True).faults  # still reached


@pytest.mark.parametrize("point", UNREACHED)
def test_point_random_never_draws_it_with_the_shared_wait(point):
    assert point in concrete_points("coordinator_pause")
    assert point not in concrete_points("coordinator_pause", True)
    # Batch writers mint their own instants: their draw is unchanged.
    assert point in concrete_points("batch_writer_pause", True)
    fault = {**PAUSE, "point": "random"}
    entry = parse_fault(fault)
    drawn = {expand([entry], s, 60, 2, 0, True)[0].fault.point for s in range(200)}
    assert point not in drawn and len(drawn) > 5
    unshared = {expand([entry], s, 60, 2, 0)[0].fault.point for s in range(200)}
    assert point in unshared
    # The runner passes the scenario's switch on.
    assert all(
        o.fault.point != point
        for s in range(60)
        for o in fault_occurrences(
            _scenario("random", shared_wait=True).model_copy(update={"seed": s})
        )
    )
