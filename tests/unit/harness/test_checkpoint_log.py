"""Reading Spark's offset and commit logs (harness/pipeline/checkpoints.py)."""

from pathlib import Path

from spark_checkpoint import chained, write_checkpoint

from harness.pipeline.checkpoints import LoggedBatch, committed_batches, read_checkpoint


def test_ranges_chain_from_zero_and_only_committed_entries_count(tmp_path: Path) -> None:
    root = write_checkpoint(tmp_path, chained(6, 100, 250, 300), commits=[0, 1, 2])
    (root / "commits" / ".3.5e59dfa3.tmp").write_text("v1\n{}")  # a rename in flight
    record = read_checkpoint(root)
    assert record.batches == [
        LoggedBatch(0, 0, 0, 6, True),
        LoggedBatch(1, 1, 6, 100, True),
        LoggedBatch(2, 2, 100, 250, True),
        LoggedBatch(3, 3, 250, 300, False),
    ]
    assert (record.gaps, record.conflicts) == ([], [])
    assert committed_batches(root) == [0, 1, 2]
    assert record.summary()["committed_batches"] == 3
    assert record.summary()["uncommitted_batches"] == 1


def test_missing_offset_entries_fold_into_the_next_logged_batch(tmp_path: Path) -> None:
    root = write_checkpoint(tmp_path, {0: 10, 3: 40}, commits=[0, 1, 2, 3])
    record = read_checkpoint(root)
    assert record.batches == [LoggedBatch(0, 0, 0, 10, True), LoggedBatch(3, 1, 10, 40, True)]
    assert record.committed_ids() == {0, 1, 2, 3}
    assert record.gaps and "1, 2" in record.gaps[0]
    assert record.conflicts == []


def test_a_purged_prefix_is_a_gap_not_a_silent_start(tmp_path: Path) -> None:
    # Spark's default retention (minBatchesToRetain) deletes old entries.
    record = read_checkpoint(write_checkpoint(tmp_path, {5: 50, 6: 60}, commits=[5, 6]))
    assert record.batches[0] == LoggedBatch(5, 0, 0, 50, True)
    assert record.gaps


def test_an_unreadable_entry_is_a_gap_and_a_missing_commit_below_the_last_too(
    tmp_path: Path,
) -> None:
    root = write_checkpoint(tmp_path, chained(10, 20, 30), commits=[0, 2])
    (root / "offsets" / "1").write_bytes(b"v1\n\xff\xfe not json")
    record = read_checkpoint(root)
    assert record.batches == [LoggedBatch(0, 0, 0, 10, True), LoggedBatch(2, 1, 10, 30, True)]
    assert any("commit log entries missing for batches 1" in g for g in record.gaps)
    assert any("offsets/1: not a source offset entry" in g for g in record.gaps)


def test_contradictions_are_conflicts(tmp_path: Path) -> None:
    backwards = read_checkpoint(write_checkpoint(tmp_path / "a", chained(10, 5, 20), [0, 1, 2]))
    assert any("backwards" in c for c in backwards.conflicts)
    commit_only = read_checkpoint(write_checkpoint(tmp_path / "b", chained(10), [0, 1]))
    assert any("without offsets: batches 1" in c for c in commit_only.conflicts)
    two_open = read_checkpoint(write_checkpoint(tmp_path / "c", chained(10, 20, 30), [0]))
    assert any("one batch only" in c for c in two_open.conflicts)
    assert read_checkpoint(tmp_path / "none").conflicts  # no checkpoint at all
    root = write_checkpoint(tmp_path / "d", chained(10, 20), [0])
    (root / "offsets" / "1").write_text("v1\n{}")  # the newest entry has no source line
    assert any("from 1 on" in c for c in read_checkpoint(root).conflicts)
