"""The `service` lock provider (engine/locks/service.py): the coordinator serves the table
lock over RPC, writers find it through the file it publishes its address in, follow it
across a restart, and a hold an older coordinator's service granted is sealed by the next
epoch wherever its holder was paused."""

from __future__ import annotations

import threading

import pytest

from engine.config import Safety, TableConfig
from engine.errors import FencedError, LockTimeoutError
from engine.locks.registry import LockSpec
from engine.locks.service_rpc import write_service_endpoint
from engine.stream.state import EpochStore
from engine.stream.table_port import serve_table_lock
from engine.stream.transport.rpc import Endpoint
from engine.stream.transport.server import CoordinatorServer
from engine.table import Table
from tests.unit.engine.engine_helpers import rows

WAIT_S = 10.0


class Coordinator:
    """A coordinator's process as far as the lock goes: its table, epoch and service."""

    def __init__(self, path: str, endpoint_file: str, safety: Safety) -> None:
        self.table = Table.open(path, safety=safety, max_skew_ms=0, writer_id="coordinator")
        self.epoch = EpochStore(self.table.storage).advance()  # seals the older epochs
        self.service = serve_table_lock(self.table, self.epoch, lease_s=5.0)
        self.server = CoordinatorServer(
            None, secret=Endpoint.new_secret(), lock_service=self.service
        )
        write_service_endpoint(endpoint_file, self.server.start())

    def stop(self) -> None:
        self.server.close()
        self.table.lock.close()
        self.table.close()


@pytest.fixture
def path(tmp_path) -> str:
    p = str(tmp_path / "t")
    Table.create(p, TableConfig(file_groups=2), rows([0]).schema, max_skew_ms=0).close()
    return p


def _writer(path: str, endpoint_file: str, safety: Safety) -> Table:
    spec = LockSpec("service", endpoint_file, lease_s=5.0)
    return Table.open(path, safety=safety, max_skew_ms=0, writer_id="batch", lock_spec=spec)


def test_writers_lock_through_the_coordinators_service_and_follow_its_restart(path, tmp_path):
    endpoint_file, safety = str(tmp_path / "lock_service.json"), Safety()
    first = Coordinator(path, endpoint_file, safety)
    writer = _writer(path, endpoint_file, safety)
    t = writer.start_instant()
    writer.commit(t, writer.write_files(t, rows([1])))
    meta = writer.timeline.reload().read_metadata(t.requested_time)
    assert meta.fence.startswith(f"e{first.epoch}/")  # the grant lives in the epoch's domain
    with first.table.locked():
        with pytest.raises(LockTimeoutError):
            writer.lock.acquire(0.2)  # the coordinator holds it: excluded over RPC
        assert writer.lock.successor(t) == "coordinator"  # who holds it, asked over RPC
    first.stop()  # a crash: the service and its leases are gone
    second = Coordinator(path, endpoint_file, safety)  # a new port, a new epoch
    t2 = writer.start_instant()  # the failed call read the file again
    writer.commit(t2, writer.write_files(t2, rows([2])))
    assert (
        writer.timeline.reload()
        .read_metadata(t2.requested_time)
        .fence.startswith(f"e{second.epoch}/")
    )
    assert sorted(Table.open(path).snapshot()["id"].to_pylist()) == [1, 2]
    writer.lock.close()
    writer.close()
    second.stop()


@pytest.mark.parametrize("fencing", [True, False])
def test_a_hold_of_an_older_service_never_commits_after_the_next_epoch(path, tmp_path, fencing):
    """The batch writer stops inside its commit holding a lease of coordinator 1's service;
    coordinator 2 starts (a new service that knows nothing of it) and commits; resumed,
    the stale holder's commit must not land."""
    endpoint_file, safety = str(tmp_path / "lock_service.json"), Safety(fencing=fencing)
    first = Coordinator(path, endpoint_file, safety)
    stale = _writer(path, endpoint_file, safety)
    t = stale.start_instant()
    stats = stale.write_files(t, rows([5]))
    reached, go = threading.Event(), threading.Event()
    outcome: list[BaseException | None] = []

    def stop_in_commit() -> None:
        reached.set()
        assert go.wait(WAIT_S)

    def commit() -> None:
        try:
            stale.commit(t, stats, guard=stop_in_commit)
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=commit, daemon=True)
    thread.start()
    assert reached.wait(WAIT_S)
    first.stop()
    second = Coordinator(path, endpoint_file, safety)
    mine = second.table.start_instant()
    second.table.commit(mine, second.table.write_files(mine, rows([6])))
    go.set()
    thread.join(WAIT_S)
    completed = {i.requested_time for i in second.table.timeline.reload().completed()}
    if fencing:
        assert isinstance(outcome[0], FencedError), outcome
        assert t.requested_time not in completed and mine.requested_time in completed
    else:
        assert outcome == [None] and t.requested_time in completed  # the stale commit landed
    stale.lock.close()
    second.stop()
