"""Pauses at every named seam (harness/faults/seams.py), on the engine with hooks, no Spark.

Each table seam of instant creation, commit, rollback and compaction: a zombie (an old
coordinator epoch, a lock holder that renews nothing) stops there through the harness's own
seam hook, a successor takes over, the zombie resumes. Fencing on: the zombie's work is
refused and the successor's stands. Fencing off: the anomaly the checks report (a double
commit, a committed instant's files deleted, a zombie's instant or compaction on the
timeline). Then the harness side: the coordinator's and the batch writer's pauses, and
`point: random`."""

from __future__ import annotations

import threading
import time
from typing import Any, get_args

import pytest
from fault_occurrence import occurrence

from engine.config import Safety, TableConfig
from engine.errors import (
    FencedError,
    InstantClaimedError,
    InstantRolledBackError,
    RollbackError,
)
from engine.table import Table, cleaning
from engine.table.fence_domains import epoch_scope
from engine.timeline.instant import INFLIGHT
from harness.faults.driver_faults import DriverFaults
from harness.faults.fired import FiredLog, pause_reached, pause_resumed
from harness.faults.schedule import Occurrence, expand, parse_fault
from harness.faults.seams import concrete_points, table_seam_hook
from harness.faults.writer_pause import WriterPause
from harness.history import HistoryWriter, read_events
from harness.run_clock import RunClock
from harness.scenario.faults import TABLE_POINTS, CoordinatorPause, PausePoint
from tests.unit.engine.engine_helpers import rows
from tests.unit.engine.fencing_helpers import WAIT_S, Takeover, Zombie
from tests.unit.engine.fencing_helpers import open_writer as _open

REFUSED = (FencedError, InstantClaimedError, RollbackError)
# Without fencing there are no claims, so a rollback never reaches its claim.
UNFENCED_UNREACHABLE = {"rollback_before_claim"}


def _completed(table: Table) -> list[Any]:
    return [i for i in table.timeline.reload().instants() if i.is_completed]


def _run_paused(world: Takeover, point: str, call: Any) -> None:
    """Run `call` as the zombie until it stops at the named table point."""
    world.zombie.fence.hooks.append(table_seam_hook(lambda p, _info: p == point and world.seam()))
    world.start(call)


def _cases(op: str) -> list[tuple[str, bool]]:
    points = [p for p in TABLE_POINTS if p.startswith(f"{op}_")]
    return [(p, True) for p in points] + [
        (p, False) for p in points if p not in UNFENCED_UNREACHABLE
    ]


@pytest.fixture
def path(tmp_path) -> str:
    p = str(tmp_path / "t")
    Table.create(p, TableConfig(file_groups=2), rows([0]).schema, max_skew_ms=0).close()
    return p


def test_every_table_point_is_tested_below():
    ops = ("instant", "commit", "rollback", "compaction", "clean", "archive")
    assert sorted(TABLE_POINTS) == sorted(p for op in ops for p, f in _cases(op) if f)


@pytest.mark.parametrize(("point", "fencing"), _cases("instant"))
def test_zombie_paused_creating_an_instant(path, point, fencing):
    world = Takeover(path, Safety(fencing=fencing))
    _run_paused(world, point, world.zombie.start_instant)
    successor = world.take_over()
    with epoch_scope(world.new):
        mine = successor.start_instant().requested_time
    error = world.resume()
    theirs = [i for i in successor.timeline.reload().pending() if i.requested_time != mine]
    if fencing:
        assert isinstance(error, FencedError), error
        assert [i for i in theirs if i.state == INFLIGHT] == []  # no writer can use it
    else:
        assert error is None and world.result.requested_time in [i.requested_time for i in theirs]


@pytest.mark.parametrize(("point", "fencing"), _cases("commit"))
def test_zombie_paused_in_a_commit(path, point, fencing):
    world = Takeover(path, Safety(fencing=fencing))
    t = world.as_zombie(world.zombie.start_instant)
    stats = world.zombie.write_files(t, rows([1, 2, 3]))
    _run_paused(world, point, lambda: world.zombie.commit(t, stats))
    successor = world.take_over()
    with epoch_scope(world.new):
        successor.commit(t, stats)  # recovery recommits the instant
    error = world.resume()
    done = [i for i in _completed(successor) if i.requested_time == t.requested_time]
    if fencing:
        assert isinstance(error, REFUSED), error
        assert len(done) == 1
    else:
        assert error is None
        assert t.requested_time in successor.timeline.duplicated_times()  # `timeline` says so


@pytest.mark.parametrize(("point", "fencing"), _cases("rollback"))
def test_zombie_paused_in_a_rollback(path, point, fencing):
    """The zombie decided to roll back t; its successor recommits t meanwhile."""
    world = Takeover(path, Safety(fencing=fencing))
    t = world.as_zombie(world.zombie.start_instant)
    stats = world.zombie.write_files(t, rows([7, 8]))
    _run_paused(world, point, lambda: world.zombie.rollback(t))
    successor = world.take_over()
    decided = False  # the zombie's rollback claimed t, or put its rollback on the timeline
    with epoch_scope(world.new):
        try:
            successor.commit(t, stats)
        except (InstantClaimedError, InstantRolledBackError):
            decided = True
    error = world.resume()
    rollbacks = [i for i in _completed(successor) if i.action == "rollback"]
    # Before the rollback's plan (its requested file) is on the timeline, the zombie has
    # deleted nothing: a claim it made is void once it is sealed (engine/table/fencing.py:
    # claims per live token), and the successor recommits t.
    undecided = (
        "rollback_before_truetime",
        "rollback_truetime_wait",
        "rollback_before_claim",
        "rollback_before_requested",
    )
    assert decided == (point not in undecided)
    if fencing:
        assert isinstance(error, REFUSED), error
        assert rollbacks == []  # the zombie's rollback never completes
        if not decided:
            assert sorted(successor.snapshot()["id"].to_pylist()) == [7, 8]
    else:
        assert error is None and len(rollbacks) == 1
        if not decided:
            # A rollback recorded against a completed instant (`timeline`: committed after
            # rollback); its files stay, since the successor's completion removed t's markers.
            assert successor.timeline.reload().is_rolled_back(t.requested_time)
            assert t.requested_time in {i.requested_time for i in _completed(successor)}


@pytest.mark.parametrize(("point", "fencing"), _cases("compaction"))
def test_zombie_paused_in_a_compaction(tmp_path, point, fencing):
    path = str(tmp_path / "mor")
    config = TableConfig(table_type="mor", file_groups=1)
    Table.create(path, config, rows([0]).schema, max_skew_ms=0).close()
    world = Takeover(path, Safety(fencing=fencing))

    def commit_then_compact() -> str:
        return world.zombie.run_compaction(world.zombie.schedule_compaction())

    t = world.as_zombie(world.zombie.start_instant)
    world.as_zombie(lambda: world.zombie.commit(t, world.zombie.write_files(t, rows([1]))))
    _run_paused(world, point, commit_then_compact)
    successor = world.take_over()
    successor.lock.acquire(WAIT_S)  # takes the lock over
    successor.lock.release()
    error = world.resume()
    compactions = [i for i in _completed(successor) if i.requested_time != t.requested_time]
    if fencing:
        assert isinstance(error, FencedError), error
        assert compactions == []
        # The successor runs the compaction: the zombie's files of it go (markers).
        with epoch_scope(world.new):
            for c in successor.pending_instants():
                if c.action == "compaction":
                    successor.run_compaction(c)
        assert successor.orphan_files() == []
    else:
        assert error is None and len(compactions) == 1


def _upserts(table: Table, n: int) -> None:
    """n commits rewriting the same keys: each supersedes the slices before it."""
    for k in range(n):
        t = table.start_instant()
        table.commit(t, table.write_files(t, rows([1, 2, 3], [k, k, k])))


@pytest.mark.parametrize(("point", "fencing"), _cases("clean"))
def test_zombie_paused_in_a_clean(path, point, fencing):
    """The zombie's cleaner planned (under the lock) and stops before deleting: resumed
    after the takeover, it deletes nothing (fencing) or every planned file (off)."""
    world = Takeover(path, Safety(fencing=fencing))
    world.as_zombie(lambda: _upserts(world.zombie, 3))
    _run_paused(world, point, lambda: cleaning.clean(world.zombie, retain_commits=1))
    successor = world.take_over()
    planned = cleaning.cleaned_files(successor.reload())
    world.as_successor(successor.start_instant)
    error = world.resume()
    left = {f for f in planned if successor.storage.exists(f)}
    if fencing:
        assert isinstance(error, FencedError), error
        assert planned and left == planned
    else:
        assert error is None and planned and left == set()


@pytest.mark.parametrize(("point", "fencing"), _cases("archive"))
def test_zombie_paused_archiving(path, point, fencing):
    """The zombie archived the oldest instants and stops before removing their completed
    files from the active timeline: resumed after the takeover, it removes nothing
    (fencing) or removes them (off)."""
    world = Takeover(path, Safety(fencing=fencing))
    world.as_zombie(lambda: _upserts(world.zombie, 3))
    _run_paused(world, point, lambda: world.zombie.archive(keep=1))
    successor = world.take_over()
    world.as_successor(successor.start_instant)
    error = world.resume()
    active = [i for i in successor.timeline.reload().instants() if i.is_completed]
    if fencing:
        assert isinstance(error, FencedError), error
        assert len(active) == 3
    else:
        assert error is None and len(active) == 1
    assert len(successor.timeline.completed(include_archived=True)) == 3


# ------------------------------------------------------------------ the harness side
COORDINATOR_POINTS = [p for p in get_args(PausePoint) if p != "random"]


@pytest.mark.parametrize("point", COORDINATOR_POINTS)
def test_the_driver_stops_at_every_point_until_the_runner_resumes_it(tmp_path, point):
    """The driver side of coordinator_pause: it says it reached the seam and waits there
    (the runner SIGSTOPs it meanwhile) until the runner marks the resumption."""
    fired = FiredLog(tmp_path / "fired")
    pause = occurrence("coordinator_pause", 0, 0.0, 10.0, "coordinator", {"point": point})
    faults = DriverFaults(
        [pause], RunClock(t0=time.time()), HistoryWriter(tmp_path / "h", "test"), fired
    )
    other = next(p for p in COORDINATOR_POINTS if p != point)
    faults.coordinator_hook(other, {})  # another seam: goes straight on
    assert not fired.fired(pause_reached(pause.label))
    driver = threading.Thread(target=faults.coordinator_hook, args=(point, {}), daemon=True)
    driver.start()
    driver.join(0.3)
    assert driver.is_alive() and fired.fired(pause_reached(pause.label))
    fired.mark(pause_resumed(pause.label))
    driver.join(WAIT_S)
    assert not driver.is_alive()


def test_point_random_is_one_seam_per_run_drawn_from_the_seed():
    fault = {"kind": "coordinator_pause", "at_s": 5, "point": "random", "duration_s": 9}

    def drawn(run_seed: int, **extra: Any) -> Occurrence[CoordinatorPause]:
        return expand([parse_fault({**fault, **extra})], run_seed, 60, 2, 0)[0]

    first = drawn(1)
    assert first.fault.point in concrete_points("coordinator_pause")
    assert first.point_drawn
    assert drawn(1) == first  # deterministic
    assert len({drawn(s).fault.point for s in range(40)}) > 5  # a draw, not a constant
    assert drawn(1, seed=7) == drawn(2, seed=7)  # the fault's own seed wins
    bw = {"kind": "batch_writer_pause", "at_s": 5, "point": "random", "target": "batch_writer:0"}
    drawn_bw = expand([parse_fault(bw)], 3, 60, 2, 0)[0].fault
    assert drawn_bw.point.startswith(("instant_", "commit_"))


@pytest.mark.parametrize("fencing", [True, False])
def test_batch_writer_pause_lets_its_lease_run_out_then_resumes(tmp_path, fencing):
    """The batch writer's pause (the runner's hook): at the seam, holding the lock, it
    renews nothing, so another writer takes the lock over; then it goes on, and its
    commit is refused (fencing) or lands although it lost the lock: paused after its OCC
    check, it completes last, a commit made without the lock (what the lock-lease
    detection's timeline check sees). Its row of the key both wrote was requested first,
    so the merge (Hudi's order: by requested time) keeps the new holder's."""
    path = str(tmp_path / "mor")
    config = TableConfig(table_type="mor", file_groups=1)
    Table.create(path, config, rows([0]).schema, max_skew_ms=0).close()
    safety = Safety(fencing=fencing)
    stale = Table.open(path, safety=safety, max_skew_ms=1, writer_id="batch_writer:0")
    stale.lock.lease_s = 0.3  # a real FileLock with its renewal thread, and a short lease
    stale.lock._renewer._every_s = 0.1
    pause = occurrence(
        "batch_writer_pause",
        0,
        0.0,
        0.5,
        "batch_writer:0",
        {"point": "commit_after_checks", "duration_s": 0.5},
    )
    history = HistoryWriter(tmp_path / "h", "test")
    stop = threading.Event()
    stale.fence.hooks.append(
        WriterPause([pause], RunClock(t0=time.time()), history, stale.lock, stop).hook
    )
    t = stale.start_instant()
    stats = stale.write_files(t, rows([5], [500]))
    z = Zombie(lambda: stale.commit(t, stats))
    z.start()
    deadline = time.monotonic() + WAIT_S
    while not [e for e in read_events(tmp_path / "h") if e["kind"] == "pause_reached"]:
        assert time.monotonic() < deadline, "the batch writer never reached its point"
        time.sleep(0.01)
    other = _open(path, safety, paused=False, name="batch_writer:1")
    mine = other.start_instant()  # waits until the paused writer's lease ran out
    other.commit(mine, other.write_files(mine, rows([5], [600])))
    error = z.finish()
    stop.set()
    done = {i.requested_time for i in _completed(other)}
    events = [e for e in read_events(tmp_path / "h") if e["kind"] == "fault"]
    assert events and events[0]["evidence"]["lease_taken_over"] is True
    assert events[0]["evidence"]["taken_by"] == "batch_writer:1"
    assert mine.requested_time in done
    value = dict(zip(*Table.open(path).snapshot().to_pydict().values(), strict=True))[5]
    if fencing:
        assert isinstance(error, FencedError), error
        assert t.requested_time not in done and value == 600
    else:
        assert error is None and t.requested_time in done  # landed without the lock
        assert value == 600
