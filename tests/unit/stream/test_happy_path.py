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


@pytest.mark.parametrize(
    ("table_type", "operation", "switch", "expected"),
    [
        ("cow", "upsert", True, "blocking"),  # Hudi #13464: merges would read stale bases
        ("cow", "upsert", False, "async"),
        ("cow", "insert", True, "async"),
        ("mor", "upsert", True, "async"),  # log appends never merge with an earlier slice
    ],
)
def test_cow_upserts_force_blocking_instant_generation(
    tmp_path, table_type, operation, switch, expected
):
    from engine.config import Safety, TableConfig
    from engine.stream.coordinator import Coordinator
    from engine.stream.recorder import ListRecorder
    from engine.table import Table

    table = Table.create(str(tmp_path / "t"), TableConfig(table_type=table_type))
    recorder = ListRecorder()
    coordinator = Coordinator(
        table,
        parallelism=1,
        mode="async",
        operation=operation,
        safety=Safety(cow_upsert_blocking=switch),
        recorder=recorder,
    )
    try:
        assert coordinator.mode == expected
        assert coordinator.status()["requested_mode"] == "async"
        forced = [{"requested": "async", "mode": "blocking"}] if expected == "blocking" else []
        assert recorder.of_kind("instant_mode_forced") == forced
    finally:
        coordinator.close()
        table.close()
