"""Isolation through a format's time travel and incremental reads
(harness/systems/spark_stream/isolation.py): each read as of a commit must hold exactly the
batches committed by then, each pull exactly the batch it reaches, on landed files and a
Spark checkpoint written here."""

import json
from pathlib import Path

import pyarrow as pa

from harness.pipeline.events import EventSpec
from harness.systems.spark_stream.checkpoint_truth import read_truth
from harness.systems.spark_stream.commit_watch import SeenCommit
from harness.systems.spark_stream.isolation import (
    check_isolation,
    snapshot_commits,
    stream_commits,
    stream_pulls,
)
from harness.systems.spark_stream.landing import file_name, write_atomically
from harness.systems.spark_stream.read_back import SinkReads

SPEC = EventSpec(
    mode="append", seed=1, partitions=1, keys=100, accounts=0, payload_bytes=1, file_groups=1
)


def _checkpoint(root: Path, batches: list[tuple[int, int]]) -> Path:
    """Batch n read landed offsets batches[n] = [start, end); every batch committed."""
    landing, checkpoint = root / "landing", root / "checkpoint"
    for folder in ("offsets", "commits", "sources/0"):
        (checkpoint / folder).mkdir(parents=True, exist_ok=True)
    landing.mkdir()
    for n, (start, end) in enumerate(batches):
        name = file_name(n + 1, 0, start, end)
        ids = pa.array(range(start, end), pa.int64())
        write_atomically(pa.table({"id": ids, "event_id": ids}), landing, name)
        entry = {"path": f"file://{landing / name}", "timestamp": 0, "batchId": n}
        (checkpoint / "sources/0" / str(n)).write_text("v1\n" + json.dumps(entry) + "\n")
        (checkpoint / "offsets" / str(n)).write_text(
            "v1\n{}\n" + json.dumps({"logOffset": n}) + "\n"
        )
        (checkpoint / "commits" / str(n)).write_text("v1\n{}\n")
    return checkpoint


def _rows(*ranges: tuple[int, int]) -> pa.Table:
    ids = [i for start, end in ranges for i in range(start, end)]
    return pa.table({"id": pa.array(ids, pa.int64()), "event_id": pa.array(ids, pa.int64())})


def _commit(version: int, batch: int | None, snapshot: int | None = None) -> SeenCommit:
    return SeenCommit(0.0, version, version, batch, snapshot=snapshot)


def test_each_read_as_of_a_commit_holds_exactly_the_batches_committed_by_then(
    tmp_path: Path,
) -> None:
    truth = read_truth(_checkpoint(tmp_path, [(0, 10), (10, 25)]))
    entries = [_commit(0, None), _commit(1, 0), _commit(2, 1)]
    commits, pulls = stream_commits(entries, first=0), stream_pulls(entries, first=0)
    good = {1: _rows((0, 10)), 2: _rows((0, 25))}
    increments = {(0, 1): _rows((0, 10)), (1, 2): _rows((10, 25))}

    def judged(as_of: dict, incremental: dict = increments, errors: dict | None = None):
        reads = SinkReads(as_of=as_of, incremental=incremental, errors=errors or {})
        return check_isolation(truth, commits, pulls, reads, SPEC, "a reader")

    result = judged(good)
    assert (result.verdict, result.evidence["commits"], result.evidence["pulls"]) == (
        "valid",
        2,
        2,
    )

    # A read as of version 1 that shows part of batch 1 (a later commit) is a violation.
    result = judged({1: _rows((0, 10), (10, 12)), 2: _rows((0, 25))})
    assert result.verdict == "invalid"
    (item,) = result.evidence["violations"]["items"]
    assert (item["read"], item["version"], item["batch"], item["phantom"]) == ("as_of", 1, 0, 2)

    # So is an incremental read after version 1 that holds a row of batch 0 again.
    result = judged(good, {**increments, (1, 2): _rows((9, 25))})
    (item,) = result.evidence["violations"]["items"]
    assert (result.verdict, item["read"], item["after"], item["version"]) == (
        "invalid",
        "incremental",
        1,
        2,
    )

    # A read that failed, or a commit or pull not read, leaves the verdict unknown.
    failed = judged({2: good[2]}, errors={"as_of/1": "boom"})
    assert failed.verdict == "unknown"
    assert failed.evidence["reason"]["failed_reads"] == {"as_of/1": "boom"}
    assert judged({2: good[2]}).verdict == "unknown"
    unpulled = judged(good, {(0, 1): increments[0, 1]})
    assert unpulled.evidence["reason"]["not_read"] == ["incremental/1-2"]


def test_each_of_the_stream_s_commits_is_pulled_from_the_one_before() -> None:
    """The first from whatever commit precedes it (the creation, the opening balances),
    each later one from the stream's previous commit, across the batch writers'."""
    entries = [_commit(0, None), _commit(1, None, 9), _commit(2, 0, 10)]
    entries += [_commit(3, None, 11), _commit(4, 1, 12)]
    pulls = stream_pulls(entries, first=0)
    assert [(a.version, u.version) for a, u in pulls] == [(1, 2), (2, 4)]
    assert stream_pulls([_commit(1, 0, 5)], first=1) == []  # nothing before it


def test_a_snapshot_kept_current_by_later_metadata_versions_is_read_once() -> None:
    entries = [_commit(1, None), _commit(2, 0, 10), _commit(3, 0, 10), _commit(4, 1, 11)]
    assert [c.version for c in stream_commits(entries, first=1)] == [2, 4]


def test_the_bank_reads_every_commit_after_the_table_s_creation() -> None:
    """The opening balances' and the batch writers' commits name no batch of the stream,
    yet each is a state of the table the bank check must read; the creation holds none."""
    entries = [
        _commit(0, None),  # CREATE TABLE
        _commit(1, None, 9),  # the opening balances
        _commit(2, 0, 10),
        _commit(3, None, 11),  # a transfer
        _commit(4, None, 11),  # a later metadata version keeping it current
    ]
    assert [c.version for c in snapshot_commits(entries, first=0)] == [1, 2, 3]
    assert [c.version for c in stream_commits(entries, first=0)] == [2]
