"""Shared wait (engine.truetime.shared_wait): one TrueTime wait under one lock hold mints a
commit's completion time and the next instant's requested time. Sleeps are counted through
the generator's injected sleep (no real waiting, nothing timed), storage operations per
hold through a storage hook; the generation order is judged by the timeline check."""

from __future__ import annotations

import threading

import pytest

from engine.clock import ManualClock, format_instant
from engine.config import TableConfig
from engine.locks.base import InProcessLock
from engine.stream.coordinator import Coordinator
from engine.table import Table
from engine.truetime import InstantTimeGenerator, LastGenerated
from harness.checks import timeline
from harness.faults.seams import table_seam_hook
from harness.runner.final_state import _last_generated, _timeline_instants
from tests.unit.engine.engine_helpers import HoldRecorder, held_names, rows
from tests.unit.stream.stream_harness import StreamHarness

T0 = 1_700_000_000_000


class MemoryStore:
    def __init__(self) -> None:
        self.last: LastGenerated | None = None

    def load(self) -> LastGenerated | None:
        return self.last

    def save(self, last: LastGenerated) -> None:
        self.last = last


def test_a_pair_is_two_consecutive_times_and_numbers_for_one_wait():
    sleeps: list[float] = []
    store = MemoryStore()
    gen = InstantTimeGenerator(
        ManualClock(T0), InProcessLock("pair"), 200, store=store, sleep=sleeps.append
    )
    first, second = gen.generate_pair()
    assert (first.time, second.time) == (format_instant(T0), format_instant(T0 + 1))
    assert (first.seq, second.seq) == (1, 2)
    assert store.last == LastGenerated(second.time, 2)
    assert len(sleeps) == 1
    # The wait covers the later time: its bound plus the 1 ms between the two.
    assert 0.2 < sleeps[0] <= 0.201
    after = gen.generate_stamped()  # same frozen clock: strictly above both
    assert after.time == format_instant(T0 + 2) and after.seq == 3
    assert len(sleeps) == 2


def _table(tmp_path, skew_ms: int = 50) -> tuple[Table, list[float]]:
    path = str(tmp_path / "t")
    Table.create(path, TableConfig(file_groups=4), rows([0]).schema, max_skew_ms=0).close()
    table = Table.open(path, max_skew_ms=skew_ms, heartbeat_interval_s=0)
    sleeps: list[float] = []
    table.generator._sleep = sleeps.append  # counted, not slept
    return table, sleeps


def test_commit_and_start_is_one_hold_and_one_wait_where_two_would_be(tmp_path):
    table, sleeps = _table(tmp_path)
    first = table.start_instant()
    recorder = HoldRecorder(table)
    stats = table.write_files(first, rows(range(8)), op="insert")
    sleeps.clear()
    completion, nxt = table.commit_and_start(first, stats, next_metadata={"k": 1})
    assert len(sleeps) == 1 and len(recorder.holds) == 1
    assert held_names(recorder.holds[0]) == [
        ("put", ".hoodie/.truetime"),  # one record write for both times
        ("put", ".hoodie/timeline/T_T.commit"),
        ("put", ".hoodie/timeline/T.commit.requested"),
        ("put", ".hoodie/timeline/T.inflight"),
    ]
    assert completion < nxt.requested_time
    requested = table.timeline.read_metadata(nxt.requested_time)
    assert requested.extra["k"] == 1
    assert requested.occ_baseline == completion  # it starts after the commit
    done = table.timeline.read_metadata(table.timeline.get(first.requested_time))
    assert requested.requested_seq == done.completion_seq + 1
    # The instant is an ordinary one: writable, committable, with its heartbeat.
    assert nxt.requested_time in table.heartbeats.live
    stats = table.write_files(nxt, rows(range(8, 16)), op="insert")
    table.commit(nxt, stats)
    assert sorted(table.snapshot()["id"].to_pylist()) == list(range(16))
    table.close()


def test_shared_times_keep_the_order_the_timeline_check_judges(tmp_path):
    table, _ = _table(tmp_path)
    instant = table.start_instant()
    for n in range(4):
        stats = table.write_files(instant, rows(range(n * 10, n * 10 + 5)), op="insert")
        _, instant = table.commit_and_start(instant, stats)
        table.commit(table.start_instant(), [])  # a plain cycle in between, too
    instants = _timeline_instants(table)
    result = timeline(instants, None, _last_generated(table))
    assert result.verdict == "valid", result.evidence
    table.close()


def test_if_only_the_next_instant_fails_the_commit_stands(tmp_path):
    table, _ = _table(tmp_path)
    first = table.start_instant()
    stats = table.write_files(first, rows(range(4)), op="insert")
    create = table.timeline.create_requested

    def refuse(*args, **kwargs):
        raise OSError("storage refused the requested file")

    table.timeline.create_requested = refuse
    completion, nxt = table.commit_and_start(first, stats)
    table.timeline.create_requested = create
    assert nxt is None
    assert table.reload().timeline.get(first.requested_time).completion_time == completion
    later = table.start_instant()  # the next hold reads storage again and goes on
    assert later.requested_time > completion
    table.close()


def _harness(tmp_path, mode: str, shared: bool) -> tuple[StreamHarness, list[float]]:
    h = StreamHarness(str(tmp_path), mode=mode)
    h.coordinator.close()
    h.coordinator = Coordinator(
        h.table,
        parallelism=h.parallelism,
        mode=mode,
        recorder=h.recorder,
        shared_wait=shared,
    )
    sleeps: list[float] = []
    h.table.generator._sleep = sleeps.append
    return h, sleeps


@pytest.mark.parametrize("mode", ["async", "blocking"])
@pytest.mark.parametrize("shared", [False, True])
def test_a_stream_waits_once_per_commit_with_shared_wait_twice_without(tmp_path, mode, shared):
    h, sleeps = _harness(tmp_path, mode, shared)
    batches = 5
    for _ in range(batches):
        h.run_batch()
    h.coordinator.drain(10)
    commits = h.recorder.of_kind("commit")
    created = h.recorder.of_kind("instant_created")
    # Batch b writes the instant of checkpoint b - 1; ACK b commits it.
    assert [c["checkpoint_id"] for c in commits] == list(range(-1, batches - 1))
    if shared:
        # The first instant is created alone; every commit mints the next one with it.
        assert len(sleeps) == batches + 1
        minted = [c for c in created if "minted_by_commit" in c]
        assert [c["checkpoint_id"] for c in minted] == list(range(0, batches))
        assert [c["minted_by_commit"] for c in minted] == [c["instant"] for c in commits]
    else:
        assert len(sleeps) == 2 * batches
        assert not [c for c in created if "minted_by_commit" in c]
    h.assert_exactly_once()
    result = timeline(_timeline_instants(h.table), None, _last_generated(h.table))
    assert result.verdict == "valid", result.evidence
    h.coordinator.close()
    h.table.close()


def test_a_commit_does_not_mint_while_a_creation_is_on_its_way_to_the_table(tmp_path):
    """A creation past its checks but not yet under the table lock, and an ACK's commit:
    had the commit minted the instant after it, the two requested times could come in
    either order; the commit mints nothing then, and requested times ascend with
    checkpoint ids."""
    h, _ = _harness(tmp_path, "async", True)
    h.run_batch()  # ACK 0 commits checkpoint -1 and mints checkpoint 0
    h.run_batch(ack=False)  # batch 1 wrote checkpoint 0
    gate, reached = threading.Event(), threading.Event()
    start = h.table.start_instant

    def gated(*args, **kwargs):
        reached.set()
        assert gate.wait(10)
        return start(*args, **kwargs)

    h.table.start_instant = gated
    h.coordinator.request_instant(1, -1, 0.0)  # checkpoint 1's creation, on its way
    assert reached.wait(10)
    h.checkpoint_complete(1)  # commits checkpoint 0 while that creation waits
    gate.set()
    assert h.coordinator.request_instant(1, -1, 10.0)["status"] == "READY"
    created = h.recorder.of_kind("instant_created")
    assert [c["checkpoint_id"] for c in created if "minted_by_commit" in c] == [0]
    by_ckp = sorted((c["checkpoint_id"], c["instant"]) for c in created)
    assert [t for _, t in by_ckp] == sorted(t for _, t in by_ckp)
    result = timeline(_timeline_instants(h.table), None, _last_generated(h.table))
    assert result.verdict == "valid", result.evidence
    h.coordinator.close()
    h.table.close()


def test_a_shared_hold_reaches_the_commit_and_the_instant_seams(tmp_path):
    """Faults name the seams of the hold (harness/faults/seams.py): its checks, generation
    record and wait are the commit's, its REQUESTED and INFLIGHT writes the new instant's."""
    table, _ = _table(tmp_path, skew_ms=1)
    table.generator._sleep = table._truetime_wait  # the engine's own wait, with its seam
    first = table.start_instant()
    stats = table.write_files(first, rows(range(4)), op="insert")
    reached: list[str] = []
    table.fence.hooks.append(table_seam_hook(lambda point, info: reached.append(point)))
    table.commit_and_start(first, stats)
    assert reached == [
        "commit_after_checks",
        "commit_before_truetime",
        "commit_truetime_wait",
        "commit_before_completed",
        "instant_before_requested",
        "instant_before_inflight",
    ]
    table.close()
