"""Delta's commit log seen from outside (harness/systems/delta/log_watch.py) and the kill
between Delta's commit and Spark's (seams.py), on log files and checkpoints written here."""

import json
from pathlib import Path

from harness.systems.delta.log_watch import LogWatch, SeenVersion, judge, log_folder
from harness.systems.delta.seams import KillAfterCommit


def _version(table: Path, n: int, batch: int | None, adds: list[str], removes=()) -> None:
    folder = log_folder(table)
    folder.mkdir(parents=True, exist_ok=True)
    actions = [{"commitInfo": {"operation": "STREAMING UPDATE"}}]
    if batch is not None:
        actions.append({"txn": {"appId": "q", "version": batch}})
    for path in adds:
        (table / path).write_bytes(b"PAR1")
        actions.append({"add": {"path": path, "stats": json.dumps({"numRecords": 10})}})
    actions += [{"remove": {"path": p}} for p in removes]
    (folder / f"{n:020d}.json").write_text("\n".join(json.dumps(a) for a in actions))


def _seen(version: int, poll: int, added: tuple[str, ...] = ()) -> SeenVersion:
    return SeenVersion(float(poll), poll, version, added=added)


def test_the_watch_reads_each_version_s_batch_files_and_rows_once(tmp_path: Path) -> None:
    table = tmp_path / "table"
    _version(table, 0, 0, ["a.parquet"])
    watch = LogWatch(table, tmp_path / "checkpoint")
    (first,) = watch.poll()
    assert (first.version, first.txn, first.added, first.rows_added) == (
        0,
        {"q": 0},
        ("a.parquet",),
        10,
    )
    _version(table, 1, 1, ["b.parquet", "c.parquet"], removes=["a.parquet"])
    assert [v.version for v in watch.poll()] == [1] and watch.poll() == []
    assert [v.rows_added for v in watch.entries()] == [10, 20]
    assert judge(watch.entries(), table) == []


def test_the_log_judge_finds_a_gap_a_version_out_of_order_a_file_added_twice_or_missing(
    tmp_path: Path,
) -> None:
    assert [v.rule for v in judge([_seen(0, 1), _seen(2, 2)], tmp_path)] == ["contiguous"]
    assert [v.rule for v in judge([_seen(1, 1), _seen(0, 2)], tmp_path)] == ["order"]
    (tmp_path / "f.parquet").write_bytes(b"PAR1")
    twice = [_seen(0, 1, ("f.parquet",)), _seen(1, 2, ("f.parquet",))]
    assert [v.rule for v in judge(twice, tmp_path)] == ["added_twice"]
    gone = [_seen(0, 1, ("f.parquet", "lost.parquet"))]
    (found,) = judge(gone, tmp_path)
    assert found.rule == "missing_file" and "lost.parquet" in found.detail


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
    watch = LogWatch(table, checkpoint, on_new=seam)
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
    assert (evidence.version, evidence.delta_batch, evidence.missed) == (2, 2, [0, 1])
    (checkpoint / "commits" / "2").write_text("v1\n{}\n")  # Spark got there after all
    settled = seam.settle()
    assert settled is not None and not settled.in_window
