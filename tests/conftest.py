"""What every test tier shares: one lane for the tests that use the whole machine, and how
a missing prerequisite (a docker engine, Chromium) is handled. On a developer's machine
the test is skipped with the reason; where INSTANTBENCH_REQUIRE_ALL is set (.ci/run sets
it, after installing everything) the test fails instead, so a skip can never quietly
become permanent in CI."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

REQUIRE_ALL = "INSTANTBENCH_REQUIRE_ALL"


@pytest.fixture(scope="session")
def prerequisite() -> Callable[[bool, str], None]:
    def need(present: bool, why: str) -> None:
        if present:
            return
        if os.environ.get(REQUIRE_ALL):
            pytest.fail(f"{why} ({REQUIRE_ALL} is set: .ci/run installs and starts it)")
        pytest.skip(why)

    return need


# Tests that start Spark (a pipeline driver and its executors, a standalone or docker
# cluster on the fixed addresses 127.0.0.10+) each take the machine's two cores and time
# their streams by the wall clock: two at once would starve each other's runs. They share
# one pytest-xdist lane (--dist loadgroup) and run one after another, while the unit tests
# fill the other workers.
MACHINE_LANE = "machine"


def pytest_itemcollected(item: pytest.Item) -> None:  # before xdist reads the groups
    if item.get_closest_marker("spark") or item.get_closest_marker("cluster"):
        item.add_marker(pytest.mark.xdist_group(MACHINE_LANE))
