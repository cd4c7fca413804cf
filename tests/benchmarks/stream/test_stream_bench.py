"""Streaming protocol benchmarks. Measure with:
    python -m pytest tests/benchmarks/stream --benchmark-enable -s
(the repo's addopts disable timing, so a plain run executes each once as a test)."""

import statistics
import time

import pytest

from engine.config import TableConfig
from engine.storage import Storage
from engine.stream.coordinator import Coordinator
from engine.stream.state import CheckpointStateStore
from engine.stream.transport.rpc import Endpoint, RpcCoordinatorClient
from engine.stream.transport.server import CoordinatorServer
from engine.stream.write_meta import WriteMetaEvent
from engine.table import Table


def stat(task: int, i: int, instant: str) -> dict:
    """A WriteStat dict shaped like engine.table's."""
    fg = f"fg-{task:04d}-{i:04d}"
    return {
        "file_id": fg, "file_name": f"{fg}_{task}-{i}-0_{instant}.parquet",
        "kind": "base", "instant": instant, "write_token": f"{task}-{i}-0", "op": "upsert",
        "num_rows": 50_000, "num_writes": 50_000, "num_deletes": 0, "num_inserts": 1_000,
        "file_size": 4_123_456, "prev_file": None,
    }  # fmt: skip


@pytest.fixture
def coordinator(tmp_path):
    table = Table.create(str(tmp_path / "t"), TableConfig(), max_skew_ms=1)
    c = Coordinator(table, parallelism=64)
    yield c
    c.close()


def test_coordinator_event_handling(benchmark, coordinator):
    instant = coordinator.request_instant(0, 0)["instant"]
    events = [
        WriteMetaEvent(task, 0, instant, (stat(task, i, instant),), metadata={"rows": 50_000})
        for i in range(40)
        for task in range(64)
    ]

    def handle_all() -> None:
        for e in events:
            coordinator.handle_event(e)
        coordinator.drain()

    benchmark.pedantic(handle_all, rounds=3, iterations=1)
    mean = benchmark.stats.stats.mean if benchmark.stats else None
    if mean:
        print(f"\ncoordinator: {len(events) / mean:,.0f} events/s ({len(events)} events)")


def test_instant_request_rpc_round_trip(benchmark, coordinator):
    server = CoordinatorServer(coordinator, secret=Endpoint.new_secret())
    client = RpcCoordinatorClient(server.start())
    try:
        client.request_instant(0, 0, deadline_s=10)  # created once; then READY from cache
        samples = []
        for _ in range(2_000):
            t0 = time.perf_counter()
            client.request_instant(0, 0, deadline_s=10)
            samples.append((time.perf_counter() - t0) * 1000)
        q = statistics.quantiles(samples, n=100)
        print(f"\ninstant request over RPC (loopback): p50 {q[49]:.3f} ms, p99 {q[98]:.3f} ms")
        benchmark(client.request_instant, 0, 0, 10)
    finally:
        client.close()
        server.close()


def test_writemeta_snapshot_64_writers_100_files(benchmark, coordinator, tmp_path):
    instant = coordinator.request_instant(0, 0)["instant"]
    for task in range(64):
        stats = tuple(stat(task, i, instant) for i in range(100))
        coordinator.handle_event(WriteMetaEvent(task, 0, instant, stats, last_batch=True))
    coordinator.drain()
    coordinator.state_store = CheckpointStateStore(Storage(str(tmp_path / "state")), "c")
    info = benchmark.pedantic(coordinator.snapshot, args=(1,), rounds=5, iterations=1)
    assert info["entries"] == 1
    mean = benchmark.stats.stats.mean if benchmark.stats else None
    timing = f", {mean * 1000:.1f} ms" if mean else ""
    print(f"\nWriteMeta snapshot 64 writers x 100 files: {info['bytes'] / 1e6:.2f} MB{timing}")
