"""A format's commit log seen from outside (harness/systems/spark_stream/commit_watch.py,
commit_rules.py, Delta's log.py) and the kill between the format's commit and Spark's
(seams.py), on log files and checkpoints written here."""

import json
from pathlib import Path

from harness.systems.delta.log import DELTA_LOG
from harness.systems.spark_stream.commit_rules import judge
from harness.systems.spark_stream.commit_watch import CommitWatch, SeenCommit
from harness.systems.spark_stream.seams import KillAfterCommit


def _version(table: Path, n: int, batch: int | None, adds: list[str], removes=()) -> None:
    folder = table / "_delta_log"
    folder.mkdir(parents=True, exist_ok=True)
    actions = [{"commitInfo": {"operation": "STREAMING UPDATE"}}]
    if batch is not None:
        actions.append({"txn": {"appId": "q", "version": batch}})
    for path in adds:
        (table / path).write_bytes(b"PAR1")
        actions.append({"add": {"path": path, "stats": json.dumps({"numRecords": 10})}})
    actions += [{"remove": {"path": p}} for p in removes]
    (folder / f"{n:020d}.json").write_text("\n".join(json.dumps(a) for a in actions))


def _seen(version: int, poll: int, added: tuple[str, ...] = (), **snapshot: int) -> SeenCommit:
    return SeenCommit(float(poll), poll, version, added=added, **snapshot)


def test_the_watch_reads_each_version_s_batch_and_files_once(tmp_path: Path) -> None:
    table = tmp_path / "table"
    _version(table, 0, 0, ["a.parquet"])
    watch = CommitWatch(DELTA_LOG, table, tmp_path / "checkpoint")
    (first,) = watch.poll()
    assert (first.version, first.batch, first.added) == (0, 0, ("a.parquet",))
    _version(table, 1, 1, ["b.parquet", "c.parquet"], removes=["a.parquet"])
    assert [v.version for v in watch.poll()] == [1] and watch.poll() == []
    second = watch.entries()[1]
    assert (second.batch, second.removed) == (1, ("a.parquet",))
    assert second.added == ("b.parquet", "c.parquet")
    assert judge(watch.entries(), table, first=0) == []


def _rules(entries: list[SeenCommit], table: Path, first: int = 0) -> list[str]:
    return [v.rule for v in judge(entries, table, first)]


def test_the_log_judge_finds_a_gap_a_version_out_of_order_a_file_added_twice_or_missing(
    tmp_path: Path,
) -> None:
    assert _rules([_seen(0, 1), _seen(2, 2)], tmp_path) == ["contiguous"]
    assert _rules([_seen(1, 1), _seen(2, 2)], tmp_path, first=1) == []  # Iceberg's v1 first
    assert _rules([_seen(1, 1), _seen(0, 2)], tmp_path) == ["order"]
    (tmp_path / "f.parquet").write_bytes(b"PAR1")
    twice = [_seen(0, 1, ("f.parquet",)), _seen(1, 2, ("f.parquet",))]
    assert _rules(twice, tmp_path) == ["added_twice"]
    gone = [_seen(0, 1, ("f.parquet", "lost.parquet"))]
    (found,) = judge(gone, tmp_path, 0)
    assert found.rule == "missing_file" and "lost.parquet" in found.detail


def test_a_snapshot_built_on_a_stale_parent_or_a_falling_sequence_number_is_named(
    tmp_path: Path,
) -> None:
    """Iceberg's lineage: each new current snapshot's parent is the one current before it
    and its sequence number is higher; a metadata version that keeps its snapshot is fine."""
    line = [
        _seen(1, 1),
        _seen(2, 2, snapshot=10, sequence=1),
        _seen(3, 3, snapshot=11, parent=10, sequence=2),
        _seen(4, 4, snapshot=11, parent=10, sequence=2),  # a property change: same snapshot
    ]
    assert _rules(line, tmp_path, first=1) == []
    stale = [*line, _seen(5, 5, snapshot=12, parent=10, sequence=3)]
    assert _rules(stale, tmp_path, first=1) == ["lineage"]
    falling = [*line, _seen(5, 5, snapshot=12, parent=11, sequence=2)]
    assert _rules(falling, tmp_path, first=1) == ["sequence"]


def _spark_logs(checkpoint: Path, planned: int, committed: int) -> None:
    for folder, last in (("offsets", planned), ("commits", committed)):
        (checkpoint / folder).mkdir(parents=True, exist_ok=True)
        for n in range(last + 1):
            (checkpoint / folder / str(n)).write_text("v1\n{}\n")


def test_the_kill_fires_on_the_first_version_whose_batch_spark_has_not_committed(
    tmp_path: Path,
) -> None:
    table, checkpoint = tmp_path / "table", tmp_path / "checkpoint"
    kills: list[int] = []
    seam = KillAfterCommit(lambda: kills.append(1), checkpoint)
    watch = CommitWatch(DELTA_LOG, table, checkpoint, on_new=seam)
    _spark_logs(checkpoint, planned=1, committed=1)
    _version(table, 0, None, [])  # no txn: not the stream's batch (a table's creation)
    _version(table, 1, 1, ["b.parquet"])  # batch 1, already in Spark's commit log
    watch.poll()
    assert kills == [] and seam.fired() is None
    _spark_logs(checkpoint, planned=2, committed=1)
    _version(table, 2, 2, ["c.parquet"])
    watch.poll()
    evidence = seam.settle()
    assert kills == [1] and evidence is not None and evidence.in_window
    assert (evidence.version, evidence.table_batch, evidence.missed) == (2, 2, [0, 1])
    (checkpoint / "commits" / "2").write_text("v1\n{}\n")  # Spark got there after all
    settled = seam.settle()
    assert settled is not None and not settled.in_window
