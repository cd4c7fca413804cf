"""What every test tier shares: how a missing prerequisite (a docker engine, Chromium)
is handled. On a developer's machine the test is skipped with the reason; where
INSTANTBENCH_REQUIRE_ALL is set (.ci/run sets it, after installing everything) the
test fails instead, so a skip can never quietly become permanent in CI."""

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
