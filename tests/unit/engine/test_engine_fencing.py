"""Fencing (engine/table/fencing.py): an instant completes at most once; a zombie
coordinator or a lock holder whose lease ran out never lands a timeline write, wherever it
was paused. Each case runs with the mechanism on (the write fails) and off (the anomaly).

A pause is forced, never waited for: the zombie's thread blocks at a named seam until the
test lets it go. The successor takes the lock the way a real one does: the zombie does not
renew (it is paused) and the successor's lease observer runs on a stepped fake clock."""

from __future__ import annotations

import pytest

from engine.clock import AdjustableClock, SystemClock
from engine.config import Safety, TableConfig
from engine.errors import FencedError, InstantClaimedError, LockLostError, LockTimeoutError
from engine.locks.base import InProcessLock
from engine.locks.file import FileLock
from engine.stream.state import EpochStore
from engine.table import Table
from engine.table.fence_domains import CLAIMS_DIR, epoch_scope
from tests.unit.engine.engine_helpers import rows
from tests.unit.engine.fencing_helpers import (
    LEASE_S,
    WAIT_S,
    Seam,
    Takeover,
    Zombie,
    _stepping_clock,
    new_table,
)
from tests.unit.engine.fencing_helpers import completed_files as _completed
from tests.unit.engine.lock_helpers import Rig, zookeeper  # noqa: F401

LEASE_PROVIDERS = ["file", "storage", "zookeeper", "service"]


@pytest.fixture
def path(storage_root) -> str:
    """The table on each backend: a local folder, then an S3 store (s3_folders.Folders)."""
    return new_table(storage_root)


# ------------------------------------------------------------------------- at most once
@pytest.mark.parametrize("fencing", [True, False])
def test_an_instant_completes_at_most_once_whoever_tries(path, fencing):
    """Two processes complete one requested instant (not excluded by a common lock): the
    completed files' names differ (completion times), the claim keyed by the requested
    time does not."""
    safety = Safety(fencing=fencing)
    a = Table.open(path, safety=safety, max_skew_ms=0, lock=InProcessLock(path + "/a"))
    b = Table.open(path, safety=safety, max_skew_ms=0, lock=InProcessLock(path + "/b"))
    t = a.start_instant()
    stats = a.write_files(t, rows([1, 2]))
    seam = Seam()
    first = Zombie(lambda: a.commit(t, stats, guard=seam))  # paused past its checks
    first.start()
    assert seam.reached.wait(WAIT_S)
    b.commit(t, stats)
    seam.go.set()
    error = first.finish()
    if fencing:
        assert isinstance(error, InstantClaimedError)
        assert len(_completed(a, t.requested_time)) == 1
        assert a.storage.exists(f"{CLAIMS_DIR}/{t.requested_time}")
    else:
        assert error is None
        assert t.requested_time in a.timeline.reload().duplicated_times()


@pytest.mark.parametrize("fencing", [True, False])
def test_nothing_completes_an_instant_after_its_rollback(path, fencing):
    safety = Safety(fencing=fencing)
    a = Table.open(path, safety=safety, max_skew_ms=0, lock=InProcessLock(path + "/a"))
    b = Table.open(path, safety=safety, max_skew_ms=0, lock=InProcessLock(path + "/b"))
    t = a.start_instant()
    stats = a.write_files(t, rows([1]))
    seam = Seam()
    committer = Zombie(lambda: a.commit(t, stats, guard=seam))
    committer.start()
    assert seam.reached.wait(WAIT_S)
    b.rollback(t)
    seam.go.set()
    error = committer.finish()
    timeline = a.timeline.reload()
    assert timeline.is_rolled_back(t.requested_time)
    if fencing:
        assert isinstance(error, InstantClaimedError)
        assert _completed(a, t.requested_time) == []
    else:
        assert error is None and _completed(a, t.requested_time)  # committed after rollback


# ------------------------------------------------------------------ zombie coordinator
COMMIT_SEAMS = ["after_fencing_check", "truetime_wait", "before_write"]


@pytest.mark.parametrize(
    ("seam_name", "fencing"),
    [(s, True) for s in COMMIT_SEAMS] + [("after_fencing_check", False), ("truetime_wait", False)],
)
def test_zombie_coordinator_paused_in_a_commit_never_completes_it(path, seam_name, fencing):
    world = Takeover(path, Safety(fencing=fencing))
    zombie = world.zombie
    t = world.as_zombie(zombie.start_instant)
    stats = zombie.write_files(t, rows([1, 2, 3]))

    def check_epoch() -> None:  # the coordinator's guard: the check a pause can follow
        if fencing and world.epochs.current() > world.old:
            raise FencedError("fenced")
        if seam_name == "after_fencing_check":
            world.seam()

    if seam_name == "truetime_wait":
        world.pause_in_truetime()
    elif seam_name == "before_write":
        world.pause_at(seam_name)
    world.start(lambda: zombie.commit(t, stats, guard=check_epoch))
    successor = world.take_over()  # a new driver; the old one is stopped, holding the lock
    world.as_successor(lambda: successor.commit(t, stats))  # recovery recommits the instant
    error = world.resume()
    completed = _completed(successor, t.requested_time)
    if fencing:
        assert isinstance(error, FencedError), error
        assert len(completed) == 1
        meta = successor.timeline.reload().read_metadata(t.requested_time)
        assert meta.writer_id == "successor" and meta.fence.startswith(f"e{world.new}/")
    else:
        assert error is None
        assert len(completed) == 2  # the double commit the timeline check reports


@pytest.mark.parametrize("fencing", [True, False])
def test_zombie_paused_creating_an_instant_never_puts_it_on_the_timeline(path, fencing):
    """Writers would use an instant the zombie creates: it must not appear at all."""
    world = Takeover(path, Safety(fencing=fencing))
    world.pause_in_truetime()
    world.start(world.zombie.start_instant)
    successor = world.take_over()
    mine = world.as_successor(successor.start_instant)
    error = world.resume()
    pending = [i.requested_time for i in successor.timeline.reload().pending()]
    if fencing:
        assert isinstance(error, FencedError)
        assert pending == [mine.requested_time]
    else:
        assert error is None and world.result.requested_time in pending


@pytest.mark.parametrize("fencing", [True, False])
def test_zombie_paused_in_a_rollback_never_rolls_back(path, fencing):
    """The zombie decided to roll back instant t; the successor recommits t meanwhile."""
    world = Takeover(path, Safety(fencing=fencing))
    t = world.as_zombie(world.zombie.start_instant)
    stats = world.zombie.write_files(t, rows([7, 8]))
    world.pause_in_truetime()
    world.start(lambda: world.zombie.rollback(t))
    successor = world.take_over()
    world.as_successor(lambda: successor.commit(t, stats))
    error = world.resume()
    if fencing:
        assert isinstance(error, FencedError)
        assert sorted(successor.snapshot()["id"].to_pylist()) == [7, 8]
    else:
        assert error is None
        # The committed instant's data files are gone: a completed instant references
        # missing files.
        assert _completed(successor, t.requested_time)
        # The successor's completion removed t's markers, so the rollback deletes no file,
        # but it is recorded against a completed instant (the timeline check's anomaly).
        assert successor.timeline.reload().is_rolled_back(t.requested_time)


@pytest.mark.parametrize("fencing", [True, False])
def test_zombie_paused_in_a_compaction_never_completes_it(tmp_path, fencing):
    path = new_table(str(tmp_path / "mor"), TableConfig(table_type="mor", file_groups=1))
    world = Takeover(path, Safety(fencing=fencing))
    zombie = world.zombie

    def commit_and_plan() -> object:
        t = zombie.start_instant()
        zombie.commit(t, zombie.write_files(t, rows([1])))
        return zombie.schedule_compaction()

    plan = world.as_zombie(commit_and_plan)
    world.pause_in_truetime()
    world.start(lambda: zombie.run_compaction(plan))
    world.take_over().lock.acquire(WAIT_S)  # takes over
    error = world.resume()
    done = _completed(zombie, plan.requested_time)
    if fencing:
        assert isinstance(error, FencedError) and done == []
    else:
        assert error is None and len(done) == 1


def test_a_seal_finishes_a_completion_its_writer_had_claimed(path):
    """Stopped between its claim and its completed file (two links of one temp file): the
    commit was decided, nothing else may complete the instant, so the seal publishes it."""
    epochs = EpochStore(Table.open(path).storage)
    old = epochs.advance()
    zombie = Table.open(path, max_skew_ms=0, writer_id="zombie")
    with epoch_scope(old):
        t = zombie.start_instant()
    stats = zombie.write_files(t, rows([4]))
    storage, seam = zombie.storage, Seam()
    # Local: the claim is a link of the staged temp; S3: a conditional PUT (engine/storage/s3.py).
    backend = storage.backend
    target, name, dst_arg = (
        (backend.objects, "put", 0) if storage.kind == "s3" else (backend, "link", 1)
    )
    real = getattr(target, name)

    def claim_then_stop(*args, **kwargs):
        result = real(*args, **kwargs)
        if "/claims/" in args[dst_arg]:
            seam()
        return result

    setattr(target, name, claim_then_stop)

    def commit() -> str:
        with epoch_scope(old):
            return zombie.commit(t, stats)

    z = Zombie(commit)
    z.start()
    assert seam.reached.wait(WAIT_S)
    assert _completed(zombie, t.requested_time) == []  # claimed, not yet completed
    epochs.advance()  # a successor seals the old epoch
    assert len(_completed(zombie, t.requested_time)) == 1
    seam.go.set()
    assert isinstance(z.finish(), FencedError)  # its own link finds the temp gone
    assert len(_completed(zombie, t.requested_time)) == 1
    assert Table.open(path).snapshot()["id"].to_pylist() == [4]


def test_a_sealed_epoch_cannot_open_a_new_grant(path):
    epochs = EpochStore(Table.open(path).storage)
    old = epochs.advance()
    zombie = Table.open(path, max_skew_ms=0)
    epochs.advance()
    with epoch_scope(old), pytest.raises(FencedError, match="sealed"):
        zombie.start_instant()
    assert zombie.timeline.reload().pending() == []


# ------------------------------------------------------------------------ lock leases
@pytest.mark.parametrize("fencing", [True, False])
@pytest.mark.parametrize("provider", LEASE_PROVIDERS)
def test_a_batch_writer_whose_lease_ran_out_never_completes_its_commit(
    path, fencing, provider, request
):
    """Every lock provider: the holder stops (renews nothing) inside its commit, a waiter
    takes the lock over by the provider's own rule and revokes the stale token."""
    safety = Safety(fencing=fencing)
    zk = request.getfixturevalue("zookeeper") if provider == "zookeeper" else None
    rig = Rig(provider, Table.open(path).storage, zk, lease_s=LEASE_S, stepping=True)
    stale = Table.open(path, safety=safety, max_skew_ms=1, writer_id="batch_writer:0")
    rig.table_lock(stale, "batch_writer:0")
    t = stale.start_instant()
    stats = stale.write_files(t, rows([5]))
    seam = Seam()

    def stop_in_commit() -> None:  # a stopped process: no renewal, no heartbeat to ZooKeeper
        stale.lock.suspend_renewal(True)
        seam()

    z = Zombie(lambda: stale.commit(t, stats, guard=stop_in_commit))  # paused holding the lock
    z.start()
    assert seam.reached.wait(WAIT_S)
    other = Table.open(path, safety=safety, max_skew_ms=1, writer_id="batch_writer:1")
    rig.table_lock(other, "batch_writer:1")
    mine = other.start_instant()  # takes the lock over once the lease ran out
    other.commit(mine, other.write_files(mine, rows([6])))
    seam.go.set()
    error = z.finish()
    if fencing:
        assert isinstance(error, FencedError)
        assert _completed(other, t.requested_time) == []
        meta = other.timeline.reload().read_metadata(mine.requested_time)
        assert meta.fence.startswith("w/")  # the commit carries its lock token
    else:
        assert error is None and _completed(other, t.requested_time)
    stale.lock.suspend_renewal(False)
    rig.close()


def test_renewal_is_a_compare_and_swap(path):
    storage = Table.open(path).storage
    holder = FileLock(storage, holder_id="paused", lease_s=LEASE_S, renew=False)
    holder.acquire(1)
    taker = FileLock(storage, holder_id="taker", lease_s=LEASE_S, monotonic=_stepping_clock())
    taker.acquire(1)  # the paused holder's lease ran out
    with pytest.raises(LockLostError):
        holder.renew()  # resumed: its renewal must not overwrite the new lease
    assert taker.holder == "taker"
    holder.release()
    assert taker.holder == "taker"
    taker.release()


def test_a_writer_that_recreates_a_collected_lease_version_does_not_get_the_lock(path):
    storage = Table.open(path).storage
    a = FileLock(storage, holder_id="a", renew=False)
    for _ in range(3):  # versions 1..6; 1..4 are collected
        a.acquire(1)
        a.release()
    stale = FileLock(storage, holder_id="stale", renew=False)
    assert not stale._cas(2, {"state": "held", "owner": "stale", "token": "x"})
    assert a.read_lease()[1]["state"] == "free"


def test_clock_skew_does_not_make_a_live_lease_look_expired(path):
    """Expiry is judged on the waiter's monotonic clock: a waiter whose wall clock is an
    hour ahead (or a holder's an hour behind) still waits for a live holder."""
    skewed = AdjustableClock(SystemClock())
    skewed.set_offset_ms(3_600_000)
    holder = Table.open(path, max_skew_ms=0, writer_id="holder")
    waiter = Table.open(path, clock=skewed, max_skew_ms=0, writer_id="waiter")
    with holder.locked(), pytest.raises(LockTimeoutError):
        waiter.lock.acquire(0.3)
    waiter.lock.acquire(1)
    waiter.lock.release()


def test_a_lease_expires_only_after_a_whole_lease_without_a_renewal(path):
    storage = Table.open(path).storage
    now = [0.0]
    holder = FileLock(storage, holder_id="h", lease_s=LEASE_S, renew=False)
    holder.acquire(1)
    waiter = FileLock(storage, holder_id="w", lease_s=LEASE_S, monotonic=lambda: now[0])
    assert not waiter._try_acquire()  # first look
    now[0] += LEASE_S - 0.1
    holder.renew()  # a heartbeat: the version changes
    assert not waiter._try_acquire()
    now[0] += LEASE_S - 0.1
    assert not waiter._try_acquire()  # not a whole lease since the renewal
    now[0] += 0.2
    assert waiter._try_acquire() and waiter.holder == "w"
