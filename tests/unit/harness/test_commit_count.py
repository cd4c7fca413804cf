"""The runner counts the stream's commits from the drivers' history files as they grow
(harness/runner/commit_count.py): across restarted drivers, whole lines only."""

from pathlib import Path

from harness.history import HistoryWriter
from harness.runner.commit_count import CommitCount


def test_commits_of_every_driver_are_counted_once_and_a_torn_line_waits(
    tmp_path: Path,
) -> None:
    count = CommitCount(tmp_path)
    assert count.refresh() == 0
    first = HistoryWriter(tmp_path, "driver")
    first.record("commit", instant="1")
    first.record("instant_created", instant="2")
    HistoryWriter(tmp_path, "writer:0").record("commit", instant="w")  # not a driver's
    assert count.refresh() == 1
    assert count.refresh() == 1  # nothing new: nothing counted twice
    # A restarted driver writes a file of its own; a line being written is not yet read.
    restarted = tmp_path / "events-driver-999999.jsonl"
    restarted.write_text('{"t": 1, "kind": "commit"}\n{"t": 2, "kind": "com')
    assert count.refresh() == 2
    with open(restarted, "a") as handle:
        handle.write('mit"}\n')
    assert count.refresh() == 3
