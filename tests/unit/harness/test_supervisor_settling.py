"""A run with a paused coordinator goes on until the zombie has acted: its successor must
commit first (however slowly its JVM starts), then the zombie resumes and gets its grace.
Real processes stand in for drivers; the successor's "first commit" is a status file the
test writes, so the slow start is forced, not waited for."""

import json
import time

import pytest
from fault_occurrence import occurrence
from stand_in_drivers import stand_in_supervisor

from harness.runner import supervisor as supervisor_module


@pytest.fixture
def supervisor(tmp_path, monkeypatch):
    monkeypatch.setattr(supervisor_module, "ZOMBIE_GRACE_S", 3.0)
    pause = occurrence("coordinator_pause", 0, 0.0, 0.1, "coordinator", {"duration_s": 0.1})
    with stand_in_supervisor(tmp_path, monkeypatch, [pause]) as sup:
        sup.t0 = 0.0  # the run started long ago: the pause is due, its window over
        yield sup


def test_the_run_settles_only_after_the_successor_committed_and_the_zombie_acted(
    supervisor, tmp_path
):
    zombie = supervisor.driver
    supervisor.tick()  # pauses the driver and starts its successor
    successor = supervisor.driver
    assert successor is not zombie
    for _ in range(5):  # however long the successor takes, the zombie stays paused
        supervisor.tick()
        assert supervisor.settling()
    status = {"pid": successor.pid, "rows_committed": 1}
    (tmp_path / "status.json").write_text(json.dumps(status))
    deadline = time.monotonic() + 10
    while not supervisor._reaping and time.monotonic() < deadline:
        supervisor.tick()  # once the pause's window (0.1 s) is over, the zombie resumes
        time.sleep(0.02)
    assert supervisor.settling()  # within its grace
    timer, reaped = supervisor._reaping[0]
    assert reaped is zombie
    timer.join(5)  # the grace ends: the zombie is reaped
    assert not supervisor.settling()
    assert zombie.exit_code() is not None
