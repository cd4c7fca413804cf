"""Taking over from a holder that lost the lock (engine/table/fencing.py, engine/locks/):
the LockService seals an expired lease's grant before granting the lock again; a claim
carries its holder's token, so a rollback paused after its claim does not keep its instant
pending forever; a restarted coordinator takes its predecessor's lease at once.

Every pause is forced (a thread blocked at a named seam until the test lets it go), and
every lease runs out on a fake clock, never by waiting."""

from __future__ import annotations

import pytest

from engine.config import Safety, TableConfig
from engine.errors import FencedError, InstantRolledBackError, LockTimeoutError
from engine.locks.file import FileLock
from engine.locks.service import LeaseLock, LockService
from engine.stream import table_port
from engine.stream.state import EpochStore
from engine.table import Table
from engine.table.fence_domains import CLAIMS_DIR, FENCE_DIR, epoch_scope
from engine.timeline.instant import parse_file_name
from tests.unit.engine.engine_helpers import rows
from tests.unit.engine.fencing_helpers import (
    WAIT_S,
    Seam,
    Takeover,
    Zombie,
    time_never_moves,
)
from tests.unit.engine.fencing_helpers import completed_files as _completed

SERVICE_LEASE_S = 600.0  # renewal threads (every lease / 3) never run during a test


@pytest.fixture
def path(tmp_path) -> str:
    p = str(tmp_path / "t")
    Table.create(p, TableConfig(file_groups=2), rows([0]).schema, max_skew_ms=0).close()
    return p


# ------------------------------------------------------------------ LockService takeover
@pytest.mark.parametrize("fencing", [True, False])
def test_lock_service_takeover_seals_the_expired_holders_grant(path, fencing):
    """A batch writer paused in its commit (holding the coordinator's lease) until the
    lease ran out on the service's clock; another writer gets the lock: the paused one's
    commit must never land."""
    safety = Safety(fencing=fencing)
    now = [0.0]
    coordinator = Table.open(path, safety=safety, max_skew_ms=0, writer_id="coordinator")
    service = LockService(monotonic=lambda: now[0], on_takeover=coordinator.fence.revoke)

    def writer(name: str) -> Table:
        lock = LeaseLock(service, "table", holder_id=name, lease_s=SERVICE_LEASE_S)
        return Table.open(path, safety=safety, max_skew_ms=0, writer_id=name, lock=lock)

    stale = writer("batch_writer:0")
    t = stale.start_instant()
    stats = stale.write_files(t, rows([5]))
    seam = Seam()
    z = Zombie(lambda: stale.commit(t, stats, guard=seam))  # paused holding the lease
    z.start()
    assert seam.reached.wait(WAIT_S)
    now[0] += 2 * SERVICE_LEASE_S  # the lease ran out on the service's clock
    other = writer("batch_writer:1")
    mine = other.start_instant()  # the service grants the lock: a takeover
    other.commit(mine, other.write_files(mine, rows([6])))
    seam.go.set()
    error = z.finish()
    if fencing:
        assert isinstance(error, FencedError), error
        assert _completed(other, t.requested_time) == []
    else:
        assert error is None and _completed(other, t.requested_time)  # the stale write landed
    for table in (stale, other):
        table.lock.close()


def test_lock_service_seals_nothing_while_a_lease_is_live_or_released():
    taken: list[int] = []
    now = [0.0]
    service = LockService(monotonic=lambda: now[0], on_takeover=taken.append, first_token=7)
    first = service.acquire("t", "a", 10)
    assert first == 7 and service.acquire("t", "b", 10) is False  # live: nothing sealed
    assert service.release("t", first)
    second = service.acquire("t", "b", 10)  # released: nothing to seal
    now[0] += 11
    third = service.acquire("t", "b", 10)  # its own lease ran out: still a takeover
    assert taken == [second] and third == second + 1


# ---------------------------------------------------------------- claims per live token
def _paused_rollback(path: str, seam_at) -> tuple[str, list, Takeover]:
    """A coordinator (epoch e) rolls back its instant t and stops where `seam_at(point,
    path)` says; returns (t, t's stats, the takeover to come)."""
    world = Takeover(path)
    zombie = world.zombie
    t = world.as_zombie(zombie.start_instant)
    stats = zombie.write_files(t, rows([7, 8]))
    zombie.fence.hooks.append(
        lambda point, info: seam_at(point, info.get("path", "")) and world.seam()
    )
    world.start(lambda: zombie.rollback(t))
    return t.requested_time, stats, world


def _after_claim(point: str, path: str) -> bool:
    return point == "after_write" and path.startswith(CLAIMS_DIR)


def _before_rollback_completed(point: str, path: str) -> bool:
    instant = parse_file_name(path.rsplit("/", 1)[-1])
    return point == "before_write" and instant is not None and instant.is_completed


def test_a_commit_voids_the_claim_of_a_rollback_that_never_planned(path):
    """The zombie claimed t for its rollback and stopped: its plan never reached the
    timeline, so it deleted nothing. The successor's recommit must complete t (before,
    it failed with InstantClaimedError forever), and the resumed zombie lands nothing."""
    t, stats, world = _paused_rollback(path, _after_claim)
    successor = world.take_over()
    world.as_successor(lambda: successor.commit(t, stats))
    assert isinstance(world.resume(), FencedError)
    timeline = successor.timeline.reload()
    assert len(_completed(successor, t)) == 1 and not timeline.is_rolled_back(t)
    assert sorted(successor.snapshot()["id"].to_pylist()) == [7, 8]


def test_a_commit_never_voids_a_rollback_that_planned(path):
    """Stopped after its plan (and its deletes): the rollback stands; the commit fails and
    the successor's rollback finishes it under its own token."""
    t, stats, world = _paused_rollback(path, _before_rollback_completed)
    successor = world.take_over()
    with pytest.raises(InstantRolledBackError):
        world.as_successor(lambda: successor.commit(t, stats))  # the plan is on the timeline
    world.as_successor(successor.rollback_failed_writes)
    assert isinstance(world.resume(), FencedError)
    assert successor.timeline.reload().is_rolled_back(t)
    assert _completed(successor, t) == []
    assert successor.snapshot().num_rows == 0


def test_a_rollback_takes_over_the_claim_of_a_sealed_rollback(path):
    t, _, world = _paused_rollback(path, _after_claim)
    stale_token = Table.open(path).fence.read_claim(t)["token"]
    successor = world.take_over()
    assert world.as_successor(lambda: successor.rollback(t)) is not None
    claim = successor.fence.read_claim(t)
    assert claim["token"] != stale_token and claim["token"].startswith(f"e{world.new}/")
    assert isinstance(world.resume(), FencedError)
    assert successor.timeline.reload().is_rolled_back(t)


def test_a_claim_of_a_live_completion_is_never_voided(path):
    """Only rollback claims are voidable: a completion claim (the completed file's
    bytes) keeps refusing a second completion."""
    a = Table.open(path, max_skew_ms=0, writer_id="a")
    t = a.start_instant()
    stats = a.write_files(t, rows([1]))
    a.commit(t, stats)
    assert a.fence.read_claim(t.requested_time) is None
    a.storage.delete(f".hoodie/timeline/{_completed(a, t.requested_time)[0]}")  # as if lost
    a.timeline.reload()
    with pytest.raises(Exception):  # noqa: B017 - any refusal: it is not completed twice
        a.commit(t, stats)
    assert a.storage.exists(f"{CLAIMS_DIR}/{t.requested_time}")


# --------------------------------------------------- a restarted coordinator's own lease
def _crashed_coordinator_lease(path: str) -> object:
    """A coordinator (epoch e) that died holding the table lock: its lease never renews."""
    epochs = EpochStore(Table.open(path).storage)
    epoch = epochs.advance()
    dead = Table.open(path, max_skew_ms=0, writer_id="coordinator")
    table_port.enter_epoch(dead, epoch)
    with epoch_scope(epoch):
        dead.lock.acquire(1)
    dead.lock.close()  # no renewals: the process is gone
    return dead.lock.token


@pytest.mark.parametrize("identity", ["coordinator", "batch_writer:0"])
def test_a_restarted_coordinator_takes_its_predecessors_lease_at_once(path, identity):
    """Known dead (its own identity, its epoch sealed by the new one): no lease wait. A
    lease of anyone else is waited out as before (the waiter's clock never moves here)."""
    token = _crashed_coordinator_lease(path)
    epoch = EpochStore(Table.open(path).storage).advance()
    successor = Table.open(path, max_skew_ms=0, writer_id=identity)
    successor.lock = successor.generator.lock = FileLock(
        successor.storage,
        holder_id=identity,
        monotonic=time_never_moves,
        on_takeover=successor.fence.revoke,
    )
    if identity == "coordinator":
        table_port.enter_epoch(successor, epoch)
        with epoch_scope(epoch):
            successor.lock.acquire(0)
        assert successor.lock.holder == "coordinator" and successor.lock.token != token
        assert successor.storage.exists(f"{FENCE_DIR}/w/{token}")  # its token revoked
        successor.lock.release()
    else:
        with pytest.raises(LockTimeoutError):
            successor.lock.acquire(0.2)
    successor.close()


def test_a_resumed_zombie_never_takes_its_successors_lease(path):
    """The seams suite's pause at compaction_before_truetime: the zombie (epoch e, its
    epoch sealed) resumed and wanted the lock for its next instant; its successor's lease
    carries the same identity, so the zombie took it as its own dead predecessor's and
    revoked it, and the successor's commit in that hold failed (a live coordinator
    stopped by a fenced one). A lease of its own identity is dead only to the newest
    epoch; the zombie waits the lease out like anyone else (its clock never moves here)."""
    storage = Table.open(path).storage
    zombie = Table.open(path, max_skew_ms=0, writer_id="coordinator")
    zombie.lock = zombie.generator.lock = FileLock(
        zombie.storage,
        holder_id="coordinator",
        monotonic=time_never_moves,
        on_takeover=zombie.fence.revoke,
    )
    zombie_epoch = EpochStore(storage).advance()
    table_port.enter_epoch(zombie, zombie_epoch)
    successor = Table.open(path, max_skew_ms=0, writer_id="coordinator")
    epoch = EpochStore(storage).advance()
    table_port.enter_epoch(successor, epoch)
    with epoch_scope(epoch):
        successor.lock.acquire(1)
        token = successor.lock.token
        with epoch_scope(zombie_epoch), pytest.raises(LockTimeoutError):
            zombie.lock.acquire(0.2)
        assert successor.lock.holder == "coordinator" and successor.lock.token == token
        assert not storage.exists(f"{FENCE_DIR}/w/{token}")  # not revoked
        successor.lock.release()
        successor.lock.acquire(1)  # its next hold keeps the token: nobody took the lock
        assert successor.lock.token == token and successor.lock.follows is not None
        successor.lock.release()
    zombie.close()
    successor.close()
