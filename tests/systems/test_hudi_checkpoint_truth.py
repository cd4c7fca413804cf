"""Exactly-once ground truth from a Spark 3.5 file-source checkpoint location."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from hudi_checkpoint_files import write_checkpoint

from harness.systems.spark_stream.checkpoint_truth import (
    committed_event_ids,
    committed_offsets,
    local_path,
    read_truth,
)
from harness.systems.spark_stream.landing import file_name

REAL = Path(__file__).parent / "data" / "spark35_file_source_checkpoint"


def test_a_real_spark_checkpoint_with_compacted_source_logs() -> None:
    # pyspark 3.5.9, compactInterval 3: sources/0/{2,5,8}.compact; 10 files, 10 batches.
    truth = read_truth(REAL)
    assert truth.problems == []
    assert truth.committed_batches == list(range(10))
    assert truth.pending_batches == {}
    assert all(len(files) == 1 for files in truth.batch_files.values())
    ranges = committed_offsets(truth)
    assert sorted((start, end) for _, start, end in ranges) == [(s, s + 5) for s in range(0, 50, 5)]
    assert local_path(truth.batch_files[0][0]) == Path(
        "/tmp/ckfix/land dir/000000001-p0000-000000000000-000000000005.parquet"
    )


def _land(folder: Path, tick: int, start: int, end: int) -> str:
    folder.mkdir(parents=True, exist_ok=True)
    ids = np.arange(start, end, dtype=np.int64)
    path = folder / file_name(tick, 0, start, end)
    pq.write_table(pa.table({"id": ids, "event_id": ids}), path)
    return path.as_uri()


def test_files_of_committed_batches_only(tmp_path: Path) -> None:
    land = tmp_path / "land ing"
    uris = {k: [_land(land, k + 1, 10 * k, 10 * k + 10)] for k in range(4)}
    # Batch 0 read log offsets 0-1, batch 1 offset 2, batch 2 (planned, no commit) offset 3.
    ckpt = write_checkpoint(tmp_path / "ckpt", uris, {0: 1, 1: 2, 2: 3}, commits=[0, 1])
    truth = read_truth(ckpt)
    assert truth.problems == []
    assert truth.committed_batches == [0, 1]
    assert truth.batch_files == {0: uris[0] + uris[1], 1: uris[2]}
    assert truth.pending_batches == {2: uris[3]}
    assert truth.last_committed == 1
    assert sorted(committed_event_ids(truth).tolist()) == list(range(30))


def test_a_compacted_log_whose_plain_files_were_deleted(tmp_path: Path) -> None:
    uris = {k: [f"file:///land/{file_name(k + 1, 0, k, k + 1)}"] for k in range(5)}
    ckpt = write_checkpoint(
        tmp_path / "ckpt", uris, {b: b for b in range(5)}, list(range(5)), compact={2: [0, 1, 2]}
    )
    truth = read_truth(ckpt)
    assert truth.problems == []
    assert committed_offsets(truth) == [(0, k, k + 1) for k in range(5)]


def test_contradictions_are_problems_not_guesses(tmp_path: Path) -> None:
    uris = {0: ["file:///a.parquet"], 1: ["file:///b.parquet"]}
    # A commit for a batch Spark never planned, and batch 1 committed after uncommitted 0.
    ckpt = write_checkpoint(tmp_path / "c1", uris, {0: 0, 1: 1}, commits=[1, 2])
    problems = read_truth(ckpt).problems
    assert any("commits without an offset entry: batches [2]" in p for p in problems)
    assert any("committed after an uncommitted one: [1]" in p for p in problems)
    # An offset entry naming a source log offset that has no entry.
    ckpt = write_checkpoint(tmp_path / "c2", {0: uris[0]}, {0: 0, 1: 1}, commits=[0, 1])
    assert any("batch 1: no source log entry" in p for p in read_truth(ckpt).problems)
    # An unreadable offset entry.
    broken = write_checkpoint(tmp_path / "c3", uris, {0: 0}, commits=[0])
    (broken / "offsets" / "0").write_text("v1\n{not json")
    assert read_truth(broken).problems[0].startswith("unreadable checkpoint")


def test_an_empty_location_has_nothing_committed(tmp_path: Path) -> None:
    truth = read_truth(tmp_path / "never-started")
    assert truth.committed_batches == [] and truth.problems == []
    assert committed_event_ids(truth).size == 0
