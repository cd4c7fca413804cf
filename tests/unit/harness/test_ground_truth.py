"""Which batches must be visible comes from Spark's checkpoint, not from driver events
(harness/runner/ground_truth.py), end to end through run_checks and the raw sink's reader."""

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from spark_checkpoint import chained, write_checkpoint

from harness.checks import exactly_once
from harness.runner.check_inputs import run_checks
from harness.runner.final_state import FinalState, read_final_state
from harness.runner.ground_truth import expected_batches
from harness.runner.rundir import RunPaths
from harness.scenario import Scenario, load_scenario


def scenario(tmp_path: Path, extra: str = "") -> Scenario:
    path = tmp_path / "scenario.yaml"
    path.write_text(f"name: t\nchecks: [exactly_once]\n{extra}")
    return load_scenario(path, [])


def batch(n: int, start: int, end: int) -> dict:
    return {"t": 1.0 + n, "kind": "batch", "batch_id": n, "start_offset": start, "end_offset": end}


def ack(n: int, action: str = "delivered") -> dict:
    return {"t": 1.5 + n, "kind": "ack", "checkpoint_id": n, "action": action}


def rows(ids) -> pa.Table:
    ids = list(ids)
    return pa.table({"id": pa.array(ids, pa.int64()), "event_id": pa.array(ids, pa.int64())})


def check(tmp_path: Path, sc: Scenario, events: list[dict], visible) -> dict:
    """exactly_once through run_checks, as result.json shows it."""
    paths = RunPaths(root=tmp_path, table=tmp_path / "table")
    final = FinalState(read_rows=lambda: rows(visible))  # no engine table: pyarrow path
    (result,) = run_checks(sc, events, final, paths)
    return result.to_dict()


CKP = "spark-checkpoint"


def test_a_batch_committed_by_spark_but_absent_from_the_history_must_be_visible(
    tmp_path: Path,
) -> None:
    # The driver was killed after Spark committed batch 3, before its AckWatcher recorded it;
    # the restarted driver started after batch 3, so no event names it.
    write_checkpoint(tmp_path / CKP, chained(10, 20, 30, 40), commits=[0, 1, 2, 3])
    events = [batch(0, 0, 10), batch(1, 10, 20), batch(2, 20, 30), ack(0), ack(1), ack(2)]
    events.append({"t": 9.0, "kind": "driver_start", "restored_batch": 3})
    sc = scenario(tmp_path)
    lost = check(tmp_path, sc, events, range(30))
    assert lost["verdict"] == "invalid"
    assert lost["lost"]["batches"] == [3] and lost["lost"]["count"] == 10
    assert lost["ground_truth"] == "spark_checkpoint"
    assert lost["checkpoint"]["committed_batches"] == 4
    assert check(tmp_path, sc, events, range(40))["verdict"] == "valid"


def test_a_batch_with_offsets_but_no_commit_is_all_or_nothing(tmp_path: Path) -> None:
    write_checkpoint(tmp_path / CKP, chained(10, 20, 30, 40), commits=[0, 1, 2])
    events = [ack(0), ack(1), ack(2)]
    sc = scenario(tmp_path)
    absent = check(tmp_path, sc, events, range(30))
    assert absent["verdict"] == "valid"
    assert absent["checkpoint"]["uncommitted_batches"] == 1
    assert check(tmp_path, sc, events, range(40))["verdict"] == "valid"
    partial = check(tmp_path, sc, events, range(35))
    assert partial["verdict"] == "invalid" and partial["partial_batches"]["count"] == 1


def test_the_last_committed_batch_is_uncertain_only_when_a_fault_lost_its_ack(
    tmp_path: Path,
) -> None:
    write_checkpoint(tmp_path / CKP, chained(10, 20, 30), commits=[0, 1, 2])
    sc = scenario(tmp_path)
    # The driver's stop path delivers the ACK of every batch Spark committed: without a
    # recorded cause, a committed batch the coordinator never heard of must still be there.
    silent = check(tmp_path, sc, [ack(0), ack(1)], range(20))
    assert silent["verdict"] == "invalid" and silent["lost"]["batches"] == [2]
    dropped = check(tmp_path, sc, [ack(0), ack(1), ack(2, "dropped")], range(20))
    assert dropped["verdict"] == "valid"
    (why,) = dropped["checkpoint"]["committed_but_uncertain"]
    assert why["batch_id"] == 2 and "ACK 2 was dropped by a fault" in why["reason"]
    delayed = {"t": 5.0, "kind": "ack_delayed", "checkpoint_id": 2, "delay_s": 30}
    late = check(tmp_path, sc, [ack(0), ack(1), delayed], range(20))
    assert late["verdict"] == "valid" and "delayed 30 s" in str(late["checkpoint"])
    # Delivered after all: certain again.
    delivered = check(tmp_path, sc, [ack(0), ack(1), delayed, ack(2)], range(20))
    assert delivered["verdict"] == "invalid"


def test_a_dropped_ack_with_a_later_ack_delivered_is_certain(tmp_path: Path) -> None:
    # Subsume contract: ACK 2 commits batch 1 whose own ACK was dropped.
    write_checkpoint(tmp_path / CKP, chained(10, 20, 30), commits=[0, 1, 2])
    events = [ack(0), ack(1, "dropped"), ack(2)]
    result = check(tmp_path, scenario(tmp_path), events, [*range(10), *range(20, 30)])
    assert result["verdict"] == "invalid" and result["lost"]["batches"] == [1]


def test_history_that_disagrees_with_the_checkpoint_is_unknown_never_valid(
    tmp_path: Path,
) -> None:
    write_checkpoint(tmp_path / CKP, chained(10, 20), commits=[0, 1])
    sc = scenario(tmp_path)
    other_range = [batch(0, 0, 10), batch(1, 12, 20), ack(1)]
    result = check(tmp_path, sc, other_range, range(20))
    assert result["verdict"] == "unknown" and "12..20" in result["reason"]
    never_committed = [batch(0, 0, 10), batch(1, 10, 20), batch(2, 20, 30), ack(2)]
    result = check(tmp_path, sc, never_committed, range(20))
    assert result["verdict"] == "unknown"
    assert "batch 2" in result["checkpoint"]["history_disagreements"][0]


def test_a_gap_is_unknown_unless_rows_of_a_committed_range_are_provably_missing(
    tmp_path: Path,
) -> None:
    write_checkpoint(tmp_path / CKP, {0: 10, 2: 30, 3: 40}, commits=[0, 1, 2, 3])
    sc = scenario(tmp_path)
    events = [ack(3)]
    whole = check(tmp_path, sc, events, range(40))
    assert whole["verdict"] == "unknown" and "missing for batches 1" in whole["reason"]
    # Batches 1 and 2 share one range (10..30), committed: its missing rows are provable.
    holed = check(tmp_path, sc, events, [*range(15), *range(16, 40)])
    assert holed["verdict"] == "invalid" and holed["lost"]["count"] == 1


def test_contradicting_offsets_are_unknown_even_with_rows_missing(tmp_path: Path) -> None:
    write_checkpoint(tmp_path / CKP, chained(10, 5, 20), commits=[0, 1, 2])
    result = check(tmp_path, scenario(tmp_path), [ack(2)], range(12))
    assert result["verdict"] == "unknown" and "backwards" in result["reason"]


def test_no_checkpoint_is_unknown(tmp_path: Path) -> None:
    result = check(tmp_path, scenario(tmp_path), [batch(0, 0, 10), ack(0)], range(10))
    assert result["verdict"] == "unknown"


def test_bank_offsets_count_two_legs_per_transfer(tmp_path: Path) -> None:
    write_checkpoint(tmp_path / CKP, chained(10, 25), commits=[0, 1])
    sc = scenario(tmp_path, "source: {mode: bank}\n")
    truth = expected_batches(sc, [ack(1)], tmp_path / CKP)
    assert [(b["start_offset"], b["end_offset"]) for b in truth.batches] == [(0, 20), (20, 50)]
    assert exactly_once(truth.batches, list(range(50))).verdict == "valid"


@pytest.mark.parametrize("commits", [[0, 1], [0, 1, 2]])
def test_raw_parquet_reads_and_expects_exactly_the_checkpoints_committed_batches(
    tmp_path: Path, commits: list[int]
) -> None:
    write_checkpoint(tmp_path / CKP, chained(10, 20, 30), commits=commits)
    for n, (start, end) in enumerate([(0, 10), (10, 20), (20, 30)]):
        folder = tmp_path / "table" / "raw" / f"batch={n}"
        folder.mkdir(parents=True)
        ids = pa.array(range(start, end), pa.int64())
        n_rows = end - start
        table = pa.table(
            {
                "id": ids,
                "event_id": ids,
                "account": pa.array([0] * n_rows, pa.int64()),
                "amount": pa.array([0] * n_rows, pa.int64()),
            }
        )
        pq.write_table(table, folder / "part-0.parquet")
    sc = scenario(tmp_path, "engine: {sink: raw_parquet}\n")
    paths = RunPaths(root=tmp_path, table=tmp_path / "table")
    final = read_final_state(sc, paths)
    visible = sorted(final.rows.column("event_id").to_pylist())
    assert visible == list(range(10 * len(commits)))  # no "batch" or "ack" event at all
    truth = expected_batches(sc, [], tmp_path / CKP)
    assert [b["certain"] for b in truth.batches] == [True, True, len(commits) == 3]
    (result,) = run_checks(sc, [], final, paths)
    assert result.verdict == "valid"
