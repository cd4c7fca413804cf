"""The kill between Hudi's commit and Spark's, on hand-made checkpoints and a real timeline
(tests/systems/data/hudi_1_2_0_mor_timeline: Hudi 1.2.0's streaming sink, MOR, 4 batches,
one compaction)."""

from __future__ import annotations

import shutil
from pathlib import Path

from hudi_checkpoint_files import write_checkpoint

from harness.systems.hudi.seams import KillBetweenCommits, KillMidRetry
from harness.systems.hudi.timeline_watch import (
    SeenInstant,
    extra_metadata,
    judge,
    parse_instant,
    sink_batch,
)

TIMELINE = Path(__file__).parent / "data" / "hudi_1_2_0_mor_timeline"
IDENTIFIER = "instantbench-hudi-0"
ORDER = TIMELINE.with_suffix(".order")
FIRST = "20261128194933241_20261128194940655.deltacommit"


def _seen(name: str, poll: int = 0) -> SeenInstant:
    parsed = parse_instant(name)
    assert parsed is not None
    return SeenInstant(float(poll), poll, name, *parsed)


def _table(tmp_path: Path, names: list[str]) -> Path:
    timeline = tmp_path / "table" / ".hoodie" / "timeline"
    timeline.mkdir(parents=True)
    for name in names:
        shutil.copy(TIMELINE / name, timeline / name)
    return tmp_path / "table"


def test_real_completed_instants_record_the_sink_s_batch() -> None:
    batches = {
        p.name: sink_batch(p, IDENTIFIER) for p in sorted(TIMELINE.iterdir()) if "_" in p.name
    }
    assert batches == {
        FIRST: 0,
        "20261128194946924_20261128194953131.deltacommit": 1,
        "20261128194953527_20261128194955455.deltacommit": 2,
        "20261128194955553_20261128194959288.commit": None,  # the compaction: no sink batch
        "20261128194956065_20261128194959919.deltacommit": 3,
    }
    assert sink_batch(TIMELINE / FIRST, "another-writer") is None
    assert "schema" in extra_metadata(TIMELINE / FIRST)


def test_the_real_timeline_in_its_order_of_appearance_has_no_violation() -> None:
    # The order the watch saw the files in, one poll each, during the run that wrote them.
    names = ORDER.read_text().split()
    assert sorted(names) == sorted(p.name for p in TIMELINE.iterdir())
    entries = [_seen(name, poll) for poll, name in enumerate(names)]
    assert [e.state for e in entries].count("completed") == 5
    assert judge(entries) == []
    # The compaction completed after a deltacommit was requested: had its completion time
    # been read from a clock behind that request, the judge would say so.
    late = next(e for e in entries if e.action == "commit")
    skewed = SeenInstant(
        late.seen_s,
        late.poll,
        late.name,
        "completed",
        "commit",
        late.requested,
        "20261128194956000",
    )
    violations = judge([skewed if e is late else e for e in entries])
    assert [(v.kind, v.max_before) for v in violations] == [("completion", "20261128194956065")]


def test_kill_in_the_window_and_its_evidence(tmp_path: Path) -> None:
    table = _table(tmp_path, [FIRST])
    checkpoint = write_checkpoint(tmp_path / "ckpt", {0: ["file:///a"]}, {0: 0}, commits=[])
    kills: list[int] = []
    seam = KillBetweenCommits(lambda: kills.append(1), checkpoint, table, IDENTIFIER)
    seam([_seen("20261128194933241.deltacommit.requested")])  # not a completion: no kill
    assert kills == []
    seam([_seen(FIRST, 1)])
    seam([_seen("20261128194946924_20261128194953131.deltacommit", 2)])  # fires once only
    assert kills == [1]
    evidence = seam.settle()
    assert evidence is not None
    assert (evidence.planned_at_kill, evidence.committed_at_kill) == ([0], [])
    assert (evidence.batch, evidence.hudi_batch, evidence.in_window) == (0, 0, True)
    assert not evidence.fallback and evidence.to_dict()["batch"] == 0


def test_spark_already_past_the_instant_s_batch_is_not_the_window(tmp_path: Path) -> None:
    # Spark committed batch 0 and planned batch 1: the completed instant of batch 0 is late.
    table = _table(tmp_path, [FIRST])
    uris = {0: ["file:///a"], 1: ["file:///b"]}
    checkpoint = write_checkpoint(tmp_path / "ckpt", uris, {0: 0, 1: 1}, commits=[0])
    kills: list[int] = []
    seam = KillBetweenCommits(lambda: kills.append(1), checkpoint, table, IDENTIFIER)
    seam([_seen(FIRST)])
    assert kills == [] and seam.wait(0.01) is None


def test_a_completion_after_spark_s_commit_is_missed_until_the_fallback(tmp_path: Path) -> None:
    second = "20261128194946924_20261128194953131.deltacommit"
    table = _table(tmp_path, [FIRST, second])
    uris = {0: ["file:///a"], 1: ["file:///b"]}
    checkpoint = write_checkpoint(tmp_path / "ckpt", uris, {0: 0, 1: 1}, commits=[0, 1])
    kills: list[int] = []
    seam = KillBetweenCommits(lambda: kills.append(1), checkpoint, table, IDENTIFIER)
    seam([_seen(FIRST)])  # Spark had already committed batch 0 and 1: no window
    assert kills == []
    seam.window_for_s = 0.0  # the window never showed: the next completion is the kill
    seam([_seen(second, 1)])
    evidence = seam.settle()
    assert kills == [1] and evidence is not None
    assert evidence.fallback and not evidence.in_window
    assert evidence.missed == [FIRST]
    assert evidence.batch is None  # nothing planned without a commit when it died


def test_mid_retry_kills_at_the_retry_s_instant_of_the_batch_the_harness_failed(
    tmp_path: Path,
) -> None:
    table = _table(tmp_path, [])
    checkpoint = write_checkpoint(tmp_path / "ckpt", {0: ["file:///a"]}, {0: 0}, commits=[])
    failure: dict = {}
    kills: list[int] = []
    seam = KillMidRetry(
        lambda: kills.append(1), checkpoint, table, IDENTIFIER, failed=lambda: failure or None
    )
    first = "20261128194933241.deltacommit.requested"
    seam([_seen(first)])  # the failing attempt's own instant, before the job failed
    assert kills == []
    failure.update(pending_instants=["20261128194933241"], batch_id="0")
    seam([_seen("20261128194933241.deltacommit.inflight", 1)])  # still the failed instant
    assert kills == []
    seam([_seen("20261128194938000.deltacommit.requested", 2)])  # the sink's retry
    assert kills == [1]
    evidence = seam.settle()
    assert evidence is not None and evidence.in_window and evidence.hudi_batch == 0
    assert evidence.instant == "20261128194938000.deltacommit.requested"


def test_mid_retry_is_not_in_its_window_once_spark_committed_the_failed_batch(
    tmp_path: Path,
) -> None:
    table = _table(tmp_path, [])
    checkpoint = write_checkpoint(tmp_path / "ckpt", {0: ["file:///a"]}, {0: 0}, commits=[0])
    failure = {"pending_instants": ["20261128194933241"], "batch_id": "0"}
    seam = KillMidRetry(lambda: None, checkpoint, table, IDENTIFIER, failed=lambda: failure)
    seam([_seen("20261128194938000.deltacommit.requested")])
    evidence = seam.settle()
    assert evidence is not None and not evidence.in_window
