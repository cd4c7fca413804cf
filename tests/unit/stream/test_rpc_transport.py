"""Cases 5-7 over the RPC transport, writers in separate processes (hard exits included),
plus the lock service served over RPC."""

import multiprocessing as mp
import os
import threading

import pyarrow as pa
import pytest
from stream_harness import Crash, crash_at, ids

from engine.config import TableConfig
from engine.locks.service import LockService
from engine.locks.service_rpc import RpcLeaseClient, rpc_lock
from engine.storage import Storage
from engine.stream.coordinator import Coordinator
from engine.stream.errors import TransportError
from engine.stream.recorder import ListRecorder
from engine.stream.state import CheckpointStateStore, EpochStore, WriterStateStore
from engine.stream.transport.rpc import Endpoint, RpcCoordinatorClient
from engine.stream.transport.server import CoordinatorServer
from engine.stream.writer import WriterTask
from engine.table import Table

CRASH_EXIT = 17
W = 2


def writer_process(
    endpoint: Endpoint,
    root: str,
    task: int,
    attempt: int,
    ckp: int,
    rows: list[int],
    restored: bool,
    crash_point: str | None,
) -> None:
    """One Spark task: a fresh process that hard-exits at its fault point."""

    def hook(point: str, info: dict) -> None:
        if point == crash_point:
            os._exit(CRASH_EXIT)

    table = Table.open(os.path.join(root, "table"), max_skew_ms=1)
    client = RpcCoordinatorClient(endpoint, timeout_s=5)
    w = WriterTask(
        task,
        attempt,
        ckp,
        table,
        client,
        write_batch_rows=5,
        op="insert",
        state_store=WriterStateStore(Storage(os.path.join(root, "state")), "writers"),
        fault_hook=hook,
    )
    w.initialize_state(restored)
    for i in range(0, len(rows), 4):
        w.write(pa.table({"id": pa.array(rows[i : i + 4], pa.int64())}))
    w.end_of_checkpoint()
    client.close()


class RpcPipeline:
    """The driver side: coordinator + RPC server; writer tasks run as processes."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.table = Table.create(os.path.join(root, "table"), TableConfig(), max_skew_ms=1)
        self.state = Storage(os.path.join(root, "state"))
        self.recorder = ListRecorder()
        self.secret = Endpoint.new_secret()
        self.ctx = mp.get_context("spawn")
        self.batch = -1
        self.spark_committed = -1
        self.expected: list[int] = []
        self.restored = False
        self._start_coordinator()

    def _start_coordinator(self, fault_hook=None) -> None:
        kwargs = {"fault_hook": fault_hook} if fault_hook else {}
        self.coordinator = Coordinator(
            self.table,
            parallelism=W,
            recorder=self.recorder,
            state_store=CheckpointStateStore(self.state, "coordinator"),
            epoch_store=EpochStore(self.table.storage),
            **kwargs,
        )
        self.server = CoordinatorServer(self.coordinator, secret=self.secret)
        self.endpoint = self.server.start()

    def restart_driver(self) -> None:
        self.server.close()
        self.coordinator.close()
        self._start_coordinator()
        self.coordinator.restore(self.spark_committed)
        self.batch = self.spark_committed
        self.restored = True

    def run_batch(self, crash: dict[int, str] | None = None, ack: bool = True) -> int:
        self.batch += 1
        b = self.batch
        self.coordinator.snapshot(b)
        rows = {t: ids(b, t, 12) for t in range(W)}
        attempts = dict.fromkeys(range(W), 0)
        pending = set(range(W))
        while pending:  # Spark: run the tasks, retry failed ones with the next attempt
            procs = {
                t: self.ctx.Process(
                    target=writer_process,
                    args=(
                        self.endpoint,
                        self.root,
                        t,
                        attempts[t],
                        b - 1,
                        rows[t],
                        self.restored,
                        (crash or {}).get(t) if attempts[t] == 0 else None,
                    ),
                )
                for t in pending
            }
            for p in procs.values():
                p.start()
            for t, p in procs.items():
                p.join(60)
                if p.exitcode == 0:
                    pending.discard(t)
                else:
                    assert p.exitcode == CRASH_EXIT, f"task {t} exit code {p.exitcode}"
                    attempts[t] += 1
        self.restored = False
        self.spark_committed = b
        self.expected += [r for t in range(W) for r in rows[t]]
        if ack:
            self.coordinator.notify_checkpoint_complete(b).result(10)
        return b

    def assert_exactly_once(self) -> None:
        visible = sorted(self.table.snapshot()["id"].to_pylist())
        assert visible == sorted(self.expected)

    def close(self) -> None:
        self.server.close()
        self.coordinator.close()


@pytest.fixture
def pipe(tmp_path):
    p = RpcPipeline(str(tmp_path))
    yield p
    p.close()


def test_rpc_case5_writer_process_hard_exit_mid_flush(pipe):
    pipe.run_batch()
    pipe.run_batch(crash={1: "mid_flush"})
    pipe.run_batch(crash={0: "after_event"})
    pipe.assert_exactly_once()
    assert pipe.table.orphan_files() == []  # the crashed attempts' files: deleted by markers


def test_rpc_case6_coordinator_crash_after_ack(pipe):
    pipe.run_batch()
    b = pipe.run_batch(ack=False)
    pipe.coordinator.fault_hook = crash_at("mid_commit")
    with pytest.raises(Crash):
        pipe.coordinator.notify_checkpoint_complete(b).result(10)
    pipe.restart_driver()
    pipe.run_batch()  # restored writer processes re-send batch b over RPC
    pipe.assert_exactly_once()
    assert len({c["instant"] for c in pipe.recorder.of_kind("commit")}) == len(
        pipe.recorder.of_kind("commit")
    )


def test_rpc_case7_dropped_then_stale_ack(pipe):
    pipe.run_batch()
    b1 = pipe.run_batch(ack=False)
    pipe.run_batch()
    pipe.coordinator.notify_checkpoint_complete(b1).result(10)
    assert [c["checkpoint_id"] for c in pipe.recorder.of_kind("commit")] == [-1, 0, 1]
    pipe.assert_exactly_once()


def test_rpc_wrong_secret_cannot_speak_for_a_writer(pipe):
    intruder = Endpoint(pipe.endpoint.host, pipe.endpoint.port, Endpoint.new_secret())
    client = RpcCoordinatorClient(intruder, timeout_s=1, retries=0)
    with pytest.raises((TransportError, mp.AuthenticationError)):
        client.request_instant(0, 0, deadline_s=1)


def test_rpc_many_concurrent_clients_get_one_instant(pipe):
    grants = []

    def ask() -> None:
        client = RpcCoordinatorClient(pipe.endpoint)
        grants.append(client.request_instant(0, 0, deadline_s=10))
        client.close()

    threads = [threading.Thread(target=ask) for _ in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({g.instant for g in grants}) == 1
    assert sum(g.created for g in grants) == 1


def test_lock_service_over_rpc(tmp_path):
    coordinator = Coordinator(Table.create(str(tmp_path / "t"), TableConfig()), parallelism=1)
    server = CoordinatorServer(
        coordinator, secret=Endpoint.new_secret(), lock_service=LockService()
    )
    endpoint = server.start()
    try:
        holder = rpc_lock(endpoint, holder_id="writer-0")
        other = rpc_lock(endpoint, holder_id="writer-1")
        with holder:
            assert RpcLeaseClient(endpoint).acquire("table", "writer-1", 5) is False
            with pytest.raises(Exception, match="timed out"):
                other.acquire(timeout_s=0.2)
        with other:
            pass
    finally:
        server.close()
        coordinator.close()


class _CountingConnection:
    def __init__(self) -> None:
        self.closes = 0

    def close(self) -> None:
        self.closes += 1


def test_closing_the_server_closes_each_connection_once(tmp_path):
    """close() and a connection's serving thread both close it: only the first may, or a
    descriptor number reused meanwhile by another file would be closed too."""
    coordinator = Coordinator(Table.create(str(tmp_path / "t"), TableConfig()), parallelism=1)
    server = CoordinatorServer(coordinator, secret=Endpoint.new_secret())
    conn = _CountingConnection()
    server._conns.add(conn)
    try:
        server.close()  # the server closes it ...
        server._drop(conn)  # ... then its serving thread ends and drops it too
    finally:
        coordinator.close()
    assert conn.closes == 1
