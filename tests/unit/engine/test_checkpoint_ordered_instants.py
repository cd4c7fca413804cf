"""The stream's instants follow its checkpoints (safety.checkpoint_ordered_instants): every
instant minted for checkpoint n is requested after those of every earlier checkpoint that
can still commit, whatever order the requests arrive in.

Issue 35's crossing: an ACK's prefetch asked for checkpoint 1 before batch 1 asked for
checkpoint 0, the coordinator minted in arrival order, and both committed in checkpoint
order, so Hudi's readers (logs merged by requested time) let checkpoint 0's older rows
win. The coordinator is driven directly with requests in that order: no sleeps, no timing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.config import Safety
from engine.stream import table_port
from harness.checks import timeline
from harness.runner.final_state import _last_generated, _timeline_instants
from tests.unit.stream.stream_harness import StreamHarness

WAIT_S = 30.0  # a bound, never reached: each request below is answered as soon as it can


def _instant(h: StreamHarness, checkpoint_id: int) -> str:
    reply = h.coordinator.request_instant(checkpoint_id, -1, WAIT_S)
    assert reply["status"] == "READY", reply
    return reply["instant"]


def _created(h: StreamHarness) -> list[dict[str, Any]]:
    return h.recorder.of_kind("instant_created")


def _harness(tmp_path: Path, mode: str = "async", ordered: bool = True) -> StreamHarness:
    return StreamHarness(
        str(tmp_path), mode=mode, safety=Safety(checkpoint_ordered_instants=ordered)
    )


def test_a_request_for_a_later_checkpoint_mints_the_earlier_one_first(tmp_path: Path) -> None:
    h = _harness(tmp_path)
    try:
        later = _instant(h, 1)  # first request of the run names checkpoint 1
        earlier = _instant(h, 0)  # answered with the instant minted ahead of checkpoint 1
        first = _instant(h, -1)
        assert first < earlier < later
        created = _created(h)
        assert [e["checkpoint_id"] for e in created] == [-1, 0, 1]
        assert [e.get("minted_ahead_of") for e in created] == [1, 1, None]
    finally:
        h.coordinator.close()


def test_switched_off_the_instants_cross(tmp_path: Path) -> None:
    h = _harness(tmp_path, ordered=False)
    try:
        later = _instant(h, 1)
        earlier = _instant(h, 0)
        assert earlier > later  # checkpoint 0's instant was requested after checkpoint 1's
    finally:
        h.coordinator.close()


def _crossing_run(h: StreamHarness) -> None:
    """Batch 0 commits; the ACK's prefetch asks for checkpoint 1 (batch 2's instant)
    before batch 1 asked for checkpoint 0; batches 1 and 2 then run and commit."""
    h.run_batch()
    _instant(h, 1)
    h.run_batch()
    h.run_batch()


@pytest.mark.parametrize(("ordered", "verdict"), [(True, "valid"), (False, "invalid")])
def test_the_timeline_check_judges_the_committed_order(
    tmp_path: Path, ordered: bool, verdict: str
) -> None:
    h = _harness(tmp_path, ordered=ordered)
    try:
        _crossing_run(h)
        h.assert_exactly_once()
        result = timeline(_timeline_instants(h.table), {}, _last_generated(h.table))
        assert result.verdict == verdict, result.evidence
        crossed = result.evidence["checkpoint_order"]
        if ordered:
            assert crossed["count"] == 0
        else:  # names both commits: checkpoint 1's requested before checkpoint 0's
            (item,) = crossed["items"]
            assert (item["checkpoint"], item["earlier_checkpoint"]) == (1, 0)
            assert item["instant"] < item["earlier_instant"]
    finally:
        h.coordinator.close()


def test_a_failed_earlier_creation_never_lets_the_later_one_mint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Checkpoint 0's creation fails twice (a storage error on its requested file): asked
    for first, then again ahead of checkpoint 1, which is refused with that cause rather
    than minted before it. Once checkpoint 0's creation succeeds, both follow in order."""
    h = _harness(tmp_path)
    start = h.table.start_instant
    left = [2]  # failures of checkpoint 0's creation still to inject

    def start_instant(*args: Any, **kwargs: Any) -> Any:
        if kwargs["metadata"][table_port.STREAM_TAG] == 0 and left[0] > 0:
            left[0] -= 1
            raise OSError("injected: storage error on the requested file")
        return start(*args, **kwargs)

    monkeypatch.setattr(h.table, "start_instant", start_instant)
    try:
        refused = h.coordinator.request_instant(0, -1, WAIT_S)
        assert refused["status"] == "ERROR", refused
        later = h.coordinator.request_instant(1, -1, WAIT_S)
        assert later["status"] == "ERROR" and "injected" in later["error"], later
        assert left == [0]
        assert [e["checkpoint_id"] for e in _created(h)] == [-1]  # nothing after -1
        ordered = _instant(h, 1)  # checkpoint 0 first, then 1
        assert _instant(h, 0) < ordered
        assert [e["checkpoint_id"] for e in _created(h)] == [-1, 0, 1]
    finally:
        h.coordinator.close()


def test_blocking_mode_mints_the_earlier_instant_and_waits_for_its_commit(tmp_path: Path) -> None:
    h = _harness(tmp_path, mode="blocking")
    try:
        h.run_batch()  # batch 0 (checkpoint -1) committed by ACK 0
        asked = h.coordinator.request_instant(1, -1, 0.0)  # before batch 1 asked for 0
        assert asked["status"] == "PENDING"
        b = h.run_batch()  # batch 1 writes checkpoint 0's instant, minted ahead of 1
        assert h.commits()[-1]["checkpoint_id"] == b - 1
        later = _instant(h, 1)  # checkpoint 0 committed: checkpoint 1's is made now
        assert h.commits()[-1]["requested"] < later
        created = _created(h)
        assert [(e["checkpoint_id"], e.get("minted_ahead_of")) for e in created[1:]] == [
            (0, 1),
            (1, None),
        ]
    finally:
        h.coordinator.close()


def test_after_recovery_the_first_request_for_a_later_checkpoint_mints_in_order(
    tmp_path: Path,
) -> None:
    h = _harness(tmp_path)
    try:
        h.run_batch()
        h.run_batch()  # batches 0 and 1 committed; Spark recorded batch 1
        h.restart_coordinator()  # restore(1): the next batch writes checkpoint 1
        later = _instant(h, 2)
        h.run_batch()  # batch 2 asks for checkpoint 1: minted before checkpoint 2's
        h.assert_exactly_once()
        assert h.commits()[-1]["checkpoint_id"] == 1
        assert h.commits()[-1]["requested"] < later
    finally:
        h.coordinator.close()
