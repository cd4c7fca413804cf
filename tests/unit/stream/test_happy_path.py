import pytest
from stream_harness import StreamHarness


@pytest.mark.parametrize("mode", ["async", "blocking"])
def test_batches_commit_exactly_once_in_order(tmp_path, mode):
    h = StreamHarness(str(tmp_path), mode=mode)
    for _ in range(4):
        h.run_batch(rows_per_task=12)  # chunks of 4, flush at 8, the rest at the barrier
    h.assert_exactly_once()
    commits = h.commits()
    assert [c["checkpoint_id"] for c in commits] == [-1, 0, 1, 2]
    assert [c["rows"] for c in commits] == [24] * 4
    assert all(c["files"] == 4 for c in commits)
    assert h.coordinator.pending_instants() == 0
