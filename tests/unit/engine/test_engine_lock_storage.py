"""Lock providers (leases, expiry, renewal) and storage (atomicity, hooks, torn files)."""

from __future__ import annotations

import threading
import time

import pyarrow as pa
import pytest

from engine.errors import CorruptFileError, LockTimeoutError
from engine.locks.base import InProcessLock
from engine.locks.file import FileLock
from engine.locks.service import LeaseLock, LockService
from engine.locks.storage import StorageLock
from engine.locks.zookeeper import ZooKeeperLock
from engine.storage import Storage
from tests.unit.engine.lock_helpers import PROVIDERS, ZK_LEASE_S, Rig, zookeeper  # noqa: F401

T0 = 1_700_000_000_000


@pytest.fixture
def storage(tmp_path) -> Storage:
    s = Storage(str(tmp_path / "root"))
    s.makedirs(".hoodie")
    return s


def test_in_process_lock_is_shared_per_path(tmp_path):
    a, b = InProcessLock(str(tmp_path)), InProcessLock(str(tmp_path) + "/")
    with a:
        assert b.holder == a.holder_id
        with pytest.raises(LockTimeoutError):
            b.acquire(0.05)
    b.acquire(0.05)
    b.release()


# The providers whose lock lives in the table's storage run on S3 too (moto's server).
RIGS = [*PROVIDERS, "file@s3", "storage@s3"]


def _rig(request, storage: Storage, lease_s: float, stepping: bool) -> Rig:
    provider, _, backend = request.param.partition("@")
    if backend == "s3":
        storage = Storage(request.getfixturevalue("s3_location")())
    zk = request.getfixturevalue("zookeeper") if provider == "zookeeper" else None
    return Rig(provider, storage, zk, lease_s=lease_s, stepping=stepping)


@pytest.fixture(params=RIGS)
def rig(request, storage) -> Rig:
    """Real clocks: a live holder keeps its lease (it renews)."""
    rig = _rig(request, storage, lease_s=10.0, stepping=False)
    yield rig
    rig.close()


@pytest.fixture(params=RIGS)
def paused_rig(request, storage) -> Rig:
    """A paused holder's lease runs out at the waiter's second look (ZooKeeper: once the
    server expired its session)."""
    rig = _rig(request, storage, lease_s=5.0, stepping=True)
    yield rig
    rig.close()


def test_lock_excludes_other_holders(rig):
    a, b = rig.lock("a"), rig.lock("b")
    with a, pytest.raises(LockTimeoutError):
        b.acquire(0.1)
    with b, pytest.raises(LockTimeoutError):
        a.acquire(0.1)
    a.acquire(1)
    a.release()


def test_tokens_increase_from_holder_to_holder(rig):
    """Fencing tokens: each new holder's is larger than every earlier holder's."""
    tokens = []
    for lock in (rig.lock("a"), rig.lock("b"), rig.lock("c")):
        with lock:
            tokens.append(lock.token)
    if rig.provider == "file":  # FileLock's tokens are unique, not ordered
        assert len(set(tokens)) == 3
    else:
        assert tokens == sorted(tokens) and len(set(tokens)) == 3


def test_paused_holders_lease_expires_and_is_taken_over(paused_rig):
    """A holder that stops renewing (a stopped process) loses the lock to a waiter, which
    revokes the stale token before anything else."""
    revoked = []
    holder = paused_rig.lock("paused")
    holder.acquire(5)
    stale = holder.token
    holder.suspend_renewal(True)
    waiter = paused_rig.lock("waiter", on_takeover=revoked.append)
    waiter.acquire(10 * ZK_LEASE_S)
    assert revoked == [stale]
    assert waiter.token != stale
    if paused_rig.provider != "service":  # its stepping clock expires every lease it reads
        assert holder.successor(stale) == "waiter"
    holder.suspend_renewal(False)
    holder.release()  # a late release must not free the new holder's lock
    other = paused_rig.lock("other")
    with pytest.raises(LockTimeoutError):
        other.acquire(0.1 if paused_rig.provider == "zookeeper" else 0)
    waiter.release()


def _renewal_mark(rig: Rig, lock) -> object:
    """What a renewal changes: the lease's version (file, storage), its expiry (service),
    the session (ZooKeeper: alive and the same, its lock node still there)."""
    if rig.provider in ("file", "storage"):
        return lock.read_record()[0]
    if rig.provider == "service":
        return rig.service.holder("table").expires_ms
    client = lock.client()
    return client.client_id, client.exists(f"{lock.path}/lock/{lock._lock.node}") is not None


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_live_holder_renews_its_lease(storage, request, provider):
    """The renewal really happens while the lock is held (the waiter's side of expiry is
    forced elsewhere); polled with a generous deadline, so a slow machine only waits."""
    zk = request.getfixturevalue("zookeeper") if provider == "zookeeper" else None
    lease = 3.0 if provider == "zookeeper" else 0.6
    rig = Rig(provider, storage, zk, lease_s=lease, stepping=False)
    live = rig.lock("live")
    live.acquire(5)
    try:
        first = _renewal_mark(rig, live)
        if provider == "zookeeper":  # a session outlives its timeout only by heartbeats
            time.sleep(1.5 * lease)
            assert _renewal_mark(rig, live) == first and first[1]
        else:
            deadline = time.monotonic() + 10
            while _renewal_mark(rig, live) == first and time.monotonic() < deadline:
                time.sleep(0.05)
            assert _renewal_mark(rig, live) != first, "no renewal within 10 s"
        with pytest.raises(LockTimeoutError):
            rig.lock("other").acquire(0.1)
    finally:
        live.release()
        rig.close()


def test_lock_serialises_threads_of_one_process(rig):
    lock = rig.lock("p")
    inside, overlap = [], []

    def work():
        for _ in range(10):
            with lock:
                inside.append(1)
                overlap.append(len(inside))
                inside.pop()

    threads = [threading.Thread(target=work) for _ in range(3)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert max(overlap) == 1 and len(overlap) == 30


def test_file_lock_names_its_holder(storage):
    a = FileLock(storage, holder_id="a")
    b = FileLock(storage, holder_id="b")
    with a:
        assert b.holder == "a"
        with pytest.raises(LockTimeoutError, match="held by a"):
            b.acquire(0.1)
    with b:
        assert a.holder == "b"
    assert a.holder is None and b.read_lease()[1]["state"] == "free"


def test_crashed_holders_lease_expires_only_after_a_whole_lease(storage):
    crashed = FileLock(storage, holder_id="crashed", lease_s=5, renew=False)
    crashed.acquire(1)  # and never releases
    now = [0.0]
    other = FileLock(storage, holder_id="other", lease_s=5, monotonic=lambda: now[0])
    with pytest.raises(LockTimeoutError):
        other.acquire(0.1)
    now[0] += 5.001  # the waiter saw the same lease version for a whole lease
    other.acquire(1)
    assert other.holder == "other"
    other.release()


def test_lock_service_leases():
    now = [100.0]
    svc = LockService(monotonic=lambda: now[0])
    token = svc.acquire("table", "a", 10)
    assert token and svc.acquire("table", "b", 10) is False
    assert svc.acquire("table", "a", 10) == token  # a retried RPC is harmless
    assert svc.renew("table", token, 10)
    now[0] += 10.001
    assert svc.holder("table") is None and not svc.renew("table", token, 10)
    token_b = svc.acquire("table", "b", 10)
    assert token_b > token  # fencing tokens increase
    assert not svc.release("table", token) and svc.release("table", token_b)


def test_lease_lock_over_service():
    svc = LockService()
    a, b = LeaseLock(svc, "t", "a"), LeaseLock(svc, "t", "b")
    with a:
        assert svc.holder("t").owner == "a"
        with pytest.raises(LockTimeoutError):
            b.acquire(0.05)
    with b:
        assert svc.holder("t").owner == "b"


def test_put_if_absent_never_overwrites(storage):
    storage.put_if_absent("x", b"first")
    with pytest.raises(FileExistsError):
        storage.put_if_absent("x", b"second")
    assert storage.read_bytes("x") == b"first"
    storage.write_bytes("x", b"replaced")
    assert storage.read_bytes("x") == b"replaced"
    assert [n for n in storage.list("") if n.startswith(".tmp")] == []


def test_concurrent_put_if_absent_has_one_winner(storage):
    wins = []

    def race(i):
        try:
            storage.put_if_absent("race", str(i).encode())
            wins.append(i)
        except FileExistsError:
            pass

    threads = [threading.Thread(target=race, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(wins) == 1 and storage.read_bytes("race") == str(wins[0]).encode()


def test_hooks_see_every_operation(storage):
    seen = []
    storage.hooks.append(lambda op, path: seen.append((op, path.rsplit("/", 1)[-1])))
    storage.write_bytes("a", b"1")
    storage.put_if_absent("b", b"2")
    storage.read_bytes("a")
    storage.rename("a", "c")
    storage.list("")
    storage.delete("c")
    assert [op for op, _ in seen] == ["put", "put", "read", "rename", "list", "delete"]


def test_hook_can_inject_latency_and_errors(storage):
    def slow_or_fail(op, path):
        if op == "rename":
            raise OSError("injected rename failure")
        if op == "put":
            time.sleep(0.02)

    storage.hooks.append(slow_or_fail)
    t0 = time.perf_counter()
    storage.write_bytes("a", b"1")
    assert time.perf_counter() - t0 >= 0.02
    with pytest.raises(OSError, match="injected"):
        storage.rename("a", "b")


def test_torn_parquet_names_the_file(storage):
    def tear(path):
        if path.endswith(".parquet"):
            with open(path, "r+b") as f:
                f.truncate(20)

    storage.after_write_hooks.append(tear)
    # Verified, the write itself fails; unverified, the read names the torn file.
    with pytest.raises(CorruptFileError, match=r"d\.parquet: torn write"):
        storage.write_parquet("d.parquet", pa.table({"id": [1, 2, 3]}))
    storage.verify_writes = False
    storage.write_parquet("e.parquet", pa.table({"id": [1, 2, 3]}))
    with pytest.raises(CorruptFileError, match=r"e\.parquet"):
        storage.read_parquet("e.parquet")


def test_sizes_and_missing(storage):
    storage.write_bytes("a", b"123")
    assert storage.sizes(["a", "nope"]) == {"a": 3, "nope": None}
    with pytest.raises(FileNotFoundError):
        storage.read_bytes("nope")
    assert storage.list("no/such/dir") == []


def test_file_lock_keeps_only_the_two_newest_lease_versions(storage):
    a, b = FileLock(storage, holder_id="a", renew=False), FileLock(storage, holder_id="b")
    for lock in (a, a, b, a, b, b):  # fast re-acquires, take-turns, renewals (a)
        lock.acquire(1)
        if lock is a:
            lock.renew()
        lock.release()
    assert len(storage.list(".hoodie/.lock")) == 2
    b.close()


def test_a_restarted_coordinator_takes_its_predecessors_storage_lease_at_once(storage_root):
    """known_dead (engine/stream/table_port.py enter_epoch): a lease of the coordinator's
    own identity is its sealed predecessor's, taken over without waiting out the lease."""
    storage = Storage(storage_root)
    crashed = StorageLock(storage, holder_id="coordinator", renew=False)
    crashed.acquire(1)
    revoked = []
    restarted = StorageLock(
        storage, holder_id="coordinator", monotonic=lambda: 0.0, on_takeover=revoked.append
    )
    restarted.known_dead = lambda lease: lease.get("owner") == "coordinator"
    restarted.acquire(1)
    assert revoked == [crashed.token] and restarted.token == crashed.token + 1
    restarted.release()


def test_a_restarted_coordinator_takes_its_predecessors_zookeeper_lock_at_once(request):
    """A crashed holder's session lives on for a whole session timeout; a restarted
    coordinator deletes the lock node of its own identity and revokes its token."""
    zk, path = request.getfixturevalue("zookeeper"), "/instantbench/test/restart"
    crashed = ZooKeeperLock(zk, path, holder_id="coordinator", lease_s=30)
    crashed.acquire(5)
    crashed.suspend_renewal(True)  # its process is gone: no heartbeat, the session lingers
    revoked = []
    restarted = ZooKeeperLock(
        zk, path, holder_id="coordinator", lease_s=30, on_takeover=revoked.append
    )
    restarted.known_dead = lambda lease: lease.get("owner") == "coordinator"
    restarted.acquire(5)  # far less than the 30 s session timeout
    assert revoked == [crashed.token] and restarted.token > crashed.token
    restarted.release()
    restarted.close()
    crashed.close()


def test_storage_lock_reads_nothing_back(storage_root):
    """Each CAS returns the lock object's new version (S3: the PUT's ETag), on which the
    holder's next change is conditional: acquiring reads the object once, renewing and
    releasing only write, and a fast re-acquire writes on the version its release got."""
    storage = Storage(storage_root)
    ops: list[str] = []
    storage.hooks.append(lambda op, path: ops.append(op) if path.endswith(".json") else None)
    lock = StorageLock(storage, holder_id="a", renew=False)
    steps = {
        "acquire": lambda: lock.acquire(1),
        "renew": lock.renew,
        "release": lock.release,
        "re-acquire": lambda: lock.acquire(1),
    }
    seen = {}
    for step, call in steps.items():
        ops.clear()
        call()
        seen[step] = list(ops)
    assert seen == {
        "acquire": ["read", "put"],
        "renew": ["put"],
        "release": ["put"],
        "re-acquire": ["put"],
    }
    assert lock.follows is not None  # the re-acquire was the fast path: nobody came between
    lock.renew()  # conditional on the version the last CAS returned: LockLostError if stale
    lock.release()
    assert lock.read_record()[1]["state"] == "free"
