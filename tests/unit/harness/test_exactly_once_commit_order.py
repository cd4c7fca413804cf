"""Append-mode exactly_once holds uncertain batches to commit order, as the upsert check
does (issue 26 item 6): an ACK commits every instant before it, so the visible batches are
a prefix in offset order, and an uncertain batch may be absent only with every later batch
absent too. Each all-or-nothing on its own let a later batch show without an earlier one."""

from pathlib import Path
from typing import Any

import numpy as np
from spark_checkpoint import chained, write_checkpoint
from test_ground_truth import CKP, ack, check, scenario

from harness.checks import exactly_once


def batches(certain: list[bool], size: int = 10) -> list[dict[str, Any]]:
    return [
        {"batch_id": i, "start_offset": i * size, "end_offset": (i + 1) * size, "certain": c}
        for i, c in enumerate(certain)
    ]


def ids_of(*batch_ids: int, size: int = 10) -> np.ndarray:
    return np.concatenate([np.arange(b * size, (b + 1) * size) for b in batch_ids])


def test_every_prefix_of_the_uncertain_batches_is_valid() -> None:
    expected = batches([True, True, False, False, False])
    for shown in range(4):
        r = exactly_once(expected, ids_of(0, 1, *range(2, 2 + shown)))
        assert r.verdict == "valid", (shown, r.evidence)
        assert r.evidence["batches"]["uncertain_visible"] == shown
        assert r.evidence["out_of_order"]["count"] == 0


def test_a_later_uncertain_batch_visible_without_an_earlier_one_is_invalid() -> None:
    expected = batches([True, True, False, False, False])
    r = exactly_once(expected, ids_of(0, 1, 3))  # 2 absent, 3 visible, 4 absent
    assert r.verdict == "invalid"
    assert r.evidence["partial_batches"]["count"] == 0  # each batch is all or nothing
    assert r.evidence["out_of_order"] == {
        "count": 1,
        "batches": [
            {
                "batch_id": 3,
                "certain": False,
                "visible": 10,
                "after_uncertain_batch": 2,
                "its_visible": 0,
            }
        ],
    }


def test_an_uncertain_batch_before_a_certain_one_is_held_to_the_same_order() -> None:
    """The ground truth puts uncertain batches last; if one precedes a certain batch, the
    certain one is visible only with it (an ACK commits every instant before it)."""
    expected = batches([True, False, True])
    whole = exactly_once(expected, ids_of(0, 1, 2))
    assert whole.verdict == "valid", whole.evidence
    assert whole.evidence["batches"]["uncertain_before_certain"] == 1
    skipped = exactly_once(expected, ids_of(0, 2))
    assert skipped.verdict == "invalid" and skipped.evidence["lost"]["count"] == 0
    assert [b["batch_id"] for b in skipped.evidence["out_of_order"]["batches"]] == [2]


def test_empty_uncertain_batches_do_not_break_the_prefix() -> None:
    expected = [
        *batches([True]),
        {"batch_id": 1, "start_offset": 10, "end_offset": 10, "certain": False},
        {"batch_id": 2, "start_offset": 10, "end_offset": 20, "certain": False},
    ]
    assert exactly_once(expected, ids_of(0, 1)).verdict == "valid"


def test_through_the_runner_two_lost_acks_show_the_later_batch_alone(tmp_path: Path) -> None:
    """ACKs 1 and 2 dropped by a fault and none after: batches 1 and 2 are uncertain. The
    table showing batch 2 without batch 1 committed them out of order."""
    write_checkpoint(tmp_path / CKP, chained(10, 20, 30), commits=[0, 1, 2])
    events = [ack(0), ack(1, "dropped"), ack(2, "dropped")]
    sc = scenario(tmp_path)
    for visible in (range(10), range(20), range(30)):
        assert check(tmp_path, sc, events, visible)["verdict"] == "valid", visible
    result = check(tmp_path, sc, events, [*range(10), *range(20, 30)])
    assert result["verdict"] == "invalid"
    assert result["out_of_order"]["batches"][0]["batch_id"] == 2
    assert result["out_of_order"]["batches"][0]["after_uncertain_batch"] == 1
