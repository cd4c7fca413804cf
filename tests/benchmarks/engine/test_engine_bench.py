"""Engine micro-benchmarks (pytest-benchmark). Run with --benchmark-enable to measure;
the repo default (--benchmark-disable) runs each once as a test."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from engine.config import TableConfig
from engine.layout.file_names import base_file_name, log_file_name, parse_data_file
from engine.layout.file_slices import build_view
from engine.storage import Storage
from engine.table import Table, WriteStat
from engine.timeline.active import TIMELINE_DIR, ActiveTimeline
from engine.timeline.archive import ArchivedEntry, ArchivedTimeline
from engine.timeline.commit_metadata import CommitMetadata
from engine.timeline.instant import COMPLETED, Instant

T0 = 20_240_101_000_000_000  # instant times as 17-digit integers, ms resolution is enough


def _t(n: int) -> str:
    return str(T0 + n)


@pytest.fixture
def table(tmp_path) -> Table:
    t = Table.create(str(tmp_path / "t"), TableConfig(), max_skew_ms=0, heartbeat_interval_s=0)
    yield t
    t.close()


def test_bench_instant_generation_zero_skew(benchmark, table):
    """Table lock (file lease) + timeline floor + shared last-time marker, no TrueTime sleep."""
    times = []
    benchmark(lambda: times.append(table.generator.generate()))
    assert times == sorted(times) and len(set(times)) == len(times)


def test_bench_commit_1000_files(benchmark, table):
    payload = pa.BufferOutputStream()
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"_hoodie_commit_time": ["x"], "id": [1], "v": [1]}), payload)
    data = payload.getvalue().to_pybytes()

    def setup():
        instant = table.start_instant()
        stats = []
        for n in range(1000):
            name = base_file_name(f"fg-{n:04d}", "0-0-0", instant.requested_time)
            with open(table.storage.full_path(name), "wb") as f:
                f.write(data)
            stats.append(
                WriteStat(
                    f"fg-{n:04d}",
                    name,
                    "base",
                    instant.requested_time,
                    "0-0-0",
                    "upsert",
                    1,
                    1,
                    0,
                    1,
                    len(data),
                )
            )
        return (instant, stats), {}

    completions = []
    benchmark.pedantic(
        lambda i, s: completions.append(table.commit(i, s)), setup=setup, rounds=5, iterations=1
    )
    assert len(table.timeline.read_metadata(table.timeline.completed()[-1]).stats) == 1000


def test_bench_load_timeline_10000_instants(benchmark, tmp_path):
    """9,000 archived (LSM runs) + 1,000 active completed instants."""
    storage = Storage(str(tmp_path))
    storage.makedirs(TIMELINE_DIR)
    meta = CommitMetadata().to_avro_bytes()
    archive = ArchivedTimeline(storage)
    for batch in range(9):
        archive.append(
            [
                ArchivedEntry(Instant(_t(2 * n), "commit", COMPLETED, _t(2 * n + 1)), meta)
                for n in range(batch * 1000, (batch + 1) * 1000)
            ]
        )
    for n in range(9000, 10_000):
        instant = Instant(_t(2 * n), "commit", COMPLETED, _t(2 * n + 1))
        with open(storage.full_path(f"{TIMELINE_DIR}/{instant.file_name}"), "wb") as f:
            f.write(meta)

    def load():
        timeline = ActiveTimeline(storage).reload()
        return timeline.completed(include_archived=True)

    loaded = benchmark(load)
    assert len(loaded) == 10_000


def test_bench_file_slice_view_1000_groups(benchmark):
    """1,000 file groups, each a base plus three logs, one group of them with a pending
    compaction."""
    files = []
    for g in range(1000):
        fid = f"fg-{g:04d}"
        files.append((parse_data_file(base_file_name(fid, "0-0-0", _t(10))), _t(11)))
        for v in range(3):
            log = parse_data_file(log_file_name(fid, _t(20 + 2 * v), 1, "0-0-0"))
            files.append((log, _t(21 + 2 * v)))
    view = benchmark(lambda: build_view(files, {_t(100): ["fg-0000"]}))
    assert len(view.groups) == 1000 and len(view.latest("fg-0001")[1]) == 3


@pytest.mark.parametrize("table_type", ["cow", "mor"])
def test_bench_write_files_50k_rows_upsert(benchmark, tmp_path, table_type):
    """write_files of a 50,000-row upsert batch into 8 file groups already holding 200k rows."""
    t = Table.create(
        str(tmp_path / "t"),
        TableConfig(table_type=table_type, file_groups=8),
        max_skew_ms=0,
        heartbeat_interval_s=0,
    )
    keys = np.arange(200_000)
    with t.transaction() as tx:
        tx.write(pa.table({"id": keys, "v": keys, "payload": pa.array(["x" * 100] * len(keys))}))
    rng = np.random.default_rng(0)
    batch_keys = rng.choice(400_000, 50_000, replace=False)
    batch = pa.table({"id": batch_keys, "v": batch_keys, "payload": ["y" * 100] * 50_000})
    instant = t.start_instant()
    stats = benchmark(lambda: t.write_files(instant, batch))
    assert sum(s.num_writes for s in stats) == 50_000
    t.close()
