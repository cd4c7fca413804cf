"""What every test tier shares: the machine lanes the tests that start Spark or a cluster
run in, how a missing prerequisite (a docker engine, Chromium) is handled, and Hudi's
Spark runtime. On a
developer's machine the test is skipped with the reason; where INSTANTBENCH_REQUIRE_ALL is
set (.ci/run sets it, after installing everything) the test fails instead, so a skip can
never quietly become permanent in CI."""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

import pytest

from harness.systems.delta import runtime as delta
from harness.systems.hudi.runtime import DEFAULT_VERSION, ensure_runtime
from harness.systems.iceberg import runtime as iceberg
from harness.systems.spark_stream.runtime_cache import RuntimeUnavailable, SparkRuntime

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


def _runtime(need: Callable[[bool, str], None], make: Callable[[], SparkRuntime]) -> SparkRuntime:
    """A system's Spark runtime; a machine that cannot make it skips (or, under .ci/run,
    fails) the test."""
    try:
        return make()
    except RuntimeUnavailable as exc:
        need(False, str(exc))
        raise


@pytest.fixture(scope="session")
def hudi_runtime(prerequisite: Callable[[bool, str], None]) -> SparkRuntime:
    """Apache Hudi's Spark runtime (pyspark 3.5 and the Hudi bundle), made once per machine."""
    return _runtime(prerequisite, lambda: ensure_runtime(DEFAULT_VERSION))


@pytest.fixture(scope="session")
def delta_runtime(prerequisite: Callable[[bool, str], None]) -> SparkRuntime:
    """Delta Lake's jars beside the project's pyspark, fetched once per machine."""
    return _runtime(prerequisite, delta.ensure_runtime)


@pytest.fixture(scope="session")
def iceberg_runtime(prerequisite: Callable[[bool, str], None]) -> SparkRuntime:
    """Apache Iceberg's runtime jar beside the project's pyspark, fetched once per machine."""
    return _runtime(prerequisite, iceberg.ensure_runtime)


# The tests' JVMs compile with C1 only. Each lives for one run of ~30 s on 2 cores, where
# C2's compilations cost about a sixth of the run's CPU (a delay-ack run: 32.8 s of CPU with
# both tiers, 25.8-28.5 s with C1 only, same throughput and verdict) and never pay back. A
# benchmark run (--benchmark-enable) keeps the JVM's default, as users' runs do.
TEST_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1"


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("benchmark_enable", default=False):
        os.environ.setdefault("JAVA_TOOL_OPTIONS", TEST_JAVA_OPTIONS)


# Machine lanes. A test that starts Spark or a cluster (marked `spark` or `cluster`) mostly
# waits on wall clocks (JVM start-ups, warm-ups, settle waits), so two of them share the
# machine's two cores; a third would starve the others' streams. Whatever the number of
# xdist workers, such a test first takes one of MACHINE_LANES lanes: an exclusive fcntl
# lock on a file of LANE_DIR, machine-wide, so that two pytest runs on one machine (CI and
# an engineer's) never hold one lane twice; the kernel drops a dead worker's lock. The lane
# it holds is its own address block: a cluster's master on LANE_HOSTS[lane] and its workers
# on the next addresses (INSTANTBENCH_MASTER_HOST, harness/runner/cluster_setup.py), so two
# lanes' clusters cannot meet. Everything else a test starts is its own by construction:
# its run directory (tmp_path), Spark's driver, block manager and UI ports (ephemeral or
# retried by Spark), the S3 and ZooKeeper servers (a free port the server is checked to
# own), docker containers (named after their cluster id).
#
# A test marked `whole_machine` asserts something a second run beside it could move (a
# fault that must land inside a window of the stream's own clock, a run too short to
# commit under a second run's load): it takes every lane, so no other Spark or cluster
# test runs while it does (unit tests may, as they always did beside the one lane). Each
# is marked where it is defined, with what moved when it ran beside a second lane
# (tests/integration: test_bank.py, test_hudi.py, and test_detection.py's and
# test_faults.py's WHOLE_MACHINE); forcing its race by an event instead of a time frees it
# again, as the Locust contention test's forced round did (tests/unit/jobs).
MACHINE_LANES = 2
LANE_HOSTS = ("127.0.0.20", "127.0.0.30")  # a block of 10 each: master + up to 9 workers
LANE_DIR_ENV = "INSTANTBENCH_LANE_DIR"  # the lock files' folder (a test of the lanes' own)
MASTER_HOST_ENV = "INSTANTBENCH_MASTER_HOST"
POLL_S = 0.2  # how often a test waiting for a lane looks again (a scheduler's wait)


def _lane_dir() -> Path:
    default = Path(tempfile.gettempdir()) / f"instantbench-lanes-{os.getuid()}"
    path = Path(os.environ.get(LANE_DIR_ENV) or default)
    path.mkdir(parents=True, exist_ok=True)
    return path


def _lock(path: Path, blocking: bool = True) -> IO[bytes] | None:
    """An exclusive lock on `path`, held while the returned file stays open (None: another
    holds it and `blocking` is false)."""
    handle = open(path, "a+b")  # noqa: SIM115 - the lock lives as long as the handle
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
    except BlockingIOError:
        handle.close()
        return None
    return handle


@contextlib.contextmanager
def machine_lanes(whole_machine: bool) -> Iterator[int]:
    """Hold one lane (or every lane) for the block; yields the lane whose block to use.

    The admission lock keeps this deadlock-free and fair to a whole-machine test: whoever
    holds it waits only for lanes, and a lane holder never waits for anything, so a
    whole-machine test that got admission takes the lanes in order as they free up while
    new tests queue behind it."""
    lanes = _lane_dir()
    held: list[IO[bytes]] = []
    try:
        with _lock(lanes / "admission") or contextlib.nullcontext():
            if whole_machine:
                held = [h for n in range(MACHINE_LANES) if (h := _lock(lanes / f"lane-{n}"))]
                lane = 0
            else:
                lane, handle = _first_free(lanes)
                held = [handle]
        yield lane
    finally:
        for handle in held:
            handle.close()


def _first_free(lanes: Path) -> tuple[int, IO[bytes]]:
    while True:
        for n in range(MACHINE_LANES):
            if (handle := _lock(lanes / f"lane-{n}", blocking=False)) is not None:
                return n, handle
        time.sleep(POLL_S)


def _uses_the_machine(item: pytest.Item) -> bool:
    return any(item.get_closest_marker(m) for m in ("spark", "cluster", "whole_machine"))


@pytest.fixture(autouse=True)
def machine_lane(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[int | None]:
    """The lane this test runs in (None: a unit test, no lane)."""
    if not _uses_the_machine(request.node):
        yield None
        return
    whole = request.node.get_closest_marker("whole_machine") is not None
    with machine_lanes(whole) as lane:
        monkeypatch.setenv(MASTER_HOST_ENV, LANE_HOSTS[lane])
        yield lane


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The machine tests first, the whole-machine ones next, the unit tests last (a stable
    sort: each part keeps pytest's order). xdist hands out tests in this order
    (`--maxschedchunk 1` in the README's command: a worker holds only the next test or
    two, not a long run of them), so the two lanes are busy from the start, a
    whole-machine test waits only for the two lanes' last tests, and the unit tests fill
    the workers beside it and at the end."""

    def part(item: pytest.Item) -> int:
        if item.get_closest_marker("whole_machine"):
            return 1
        return 0 if _uses_the_machine(item) else 2

    items.sort(key=part)
