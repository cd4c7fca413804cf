"""A row with a null event id is a bug the exactly_once check counts (issue 26 item 6): the
runner keeps the stream's rows with `event_id >= 0`, which drops nulls too, so a null event
id never reached `null_ids` and a table holding one could be `valid`."""

from pathlib import Path

import numpy as np
import pyarrow as pa
from spark_checkpoint import chained, write_checkpoint
from test_ground_truth import CKP, ack, scenario

from harness.checks import exactly_once
from harness.pipeline.events import upsert_keys
from harness.runner.check_inputs import run_checks
from harness.runner.driver_config import event_spec
from harness.runner.final_state import FinalState
from harness.runner.rundir import RunPaths
from harness.scenario import Scenario


def judged(tmp_path: Path, sc: Scenario, ids: list[int], event_ids: list[int | None]) -> dict:
    """exactly_once through run_checks on a table of (id, event_id) rows, batches 0 and 1
    committed and acknowledged: offsets 0..20 (bank: legs 0..40) must be visible."""
    write_checkpoint(tmp_path / CKP, chained(10, 20), commits=[0, 1])
    table = pa.table({"id": pa.array(ids, pa.int64()), "event_id": pa.array(event_ids, pa.int64())})
    paths = RunPaths(root=tmp_path, table=tmp_path / "table")
    (result,) = run_checks(sc, [ack(0), ack(1)], FinalState(read_rows=lambda: table), paths)
    return result.to_dict()


def test_an_appended_row_without_an_event_id_is_invalid_and_counted(tmp_path: Path) -> None:
    sc = scenario(tmp_path)
    every = list(range(20))
    assert judged(tmp_path, sc, every, list(every))["verdict"] == "valid"
    # Batch writers' rows carry event id -1 (no event): still left out, not a violation.
    assert judged(tmp_path, sc, [*every, -5], [*every, -1])["verdict"] == "valid"
    r = judged(tmp_path, sc, [*every, 7, 8], [*every, None, None])
    assert r["verdict"] == "invalid"
    assert r["null_ids"] == 2 and r["null_event_ids"] == 2
    assert r["observed_rows"] == 22


def test_a_bank_leg_without_an_event_id_is_counted_not_lost(tmp_path: Path) -> None:
    sc = scenario(tmp_path, "source: {mode: bank}\n")
    legs = list(range(40))  # two legs per transfer: ids 2 * event and 2 * event + 1
    events: list[int | None] = [i // 2 for i in legs]
    assert judged(tmp_path, sc, legs, events)["verdict"] == "valid"
    events[13] = None  # the leg is there, its event id is not
    r = judged(tmp_path, sc, legs, events)
    assert r["verdict"] == "invalid"
    assert r["null_event_ids"] == 1 and r["lost"]["count"] == 0


def test_an_upserted_row_without_an_event_id_is_invalid(tmp_path: Path) -> None:
    sc = scenario(tmp_path, "source: {mode: upsert, keys: 5}\n")
    offsets = np.arange(20)
    keys = upsert_keys(offsets, event_spec(sc))
    newest = {int(k): int(o) for k, o in zip(keys, offsets, strict=True)}
    key_list, event_list = list(newest), list(newest.values())
    assert judged(tmp_path, sc, key_list, list(event_list))["verdict"] == "valid"
    # A second row of a key, without an event id: filtered out, the table looked right.
    r = judged(tmp_path, sc, [*key_list, key_list[0]], [*event_list, None])
    assert r["verdict"] == "invalid"
    assert r["null_event_ids"] == 1 and r["null_keys"] == 0


def test_the_checker_counts_null_event_ids_it_is_given_beside_the_ids() -> None:
    expected = [{"batch_id": 0, "start_offset": 0, "end_offset": 4, "certain": True}]
    assert exactly_once(expected, [0, 1, 2, 3], null_event_ids=0).verdict == "valid"
    r = exactly_once(expected, [0, 1, 2, 3], null_event_ids=3)
    assert r.verdict == "invalid"
    assert r.evidence["null_event_ids"] == 3 and r.evidence["null_ids"] == 0
