"""DESIGN.md public cases 5-7, WriteMeta restore at every seam, failovers, blocking vs
async, fencing; each safety switch off shows the loss or duplicate it prevents."""

import threading
import time
from concurrent.futures import Future

import pytest
from stream_harness import Crash, StreamHarness, block_at, crash_at, ids

from engine.config import Safety
from engine.errors import FencedError
from engine.stream.coordinator import Coordinator
from engine.stream.errors import StreamError
from engine.stream.writer import FAULT_POINTS

# Events order every race here; a wait only guards against a hang, so it is generous: on a
# loaded machine a commit can take seconds.
GUARD_S = 60


def batch_ids(h: StreamHarness, b: int) -> set[int]:
    return set(h.batch_rows[b])


def commits_per_instant(h: StreamHarness) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in h.commits():
        out[c["instant"]] = out.get(c["instant"], 0) + 1
    return out


# ---------------------------------------------------------------- case 5: writer crash
@pytest.mark.parametrize("point", FAULT_POINTS)
def test_case5_writer_crash_task_retry(tmp_path, point):
    h = StreamHarness(str(tmp_path))
    h.run_batch()
    b = h.start_batch(fault_hooks={1: crash_at(point)})
    h.consume(0, ids(b, 0, 12))
    with pytest.raises(Crash):
        h.consume(1, ids(b, 1, 12))
    h.subtask_fails(1)  # attempt 1: empty bootstrap voids what attempt 0 reported
    h.consume(1, ids(b, 1, 12))
    h.checkpoint()
    h.checkpoint_complete(b)
    h.assert_exactly_once()
    # The crashed attempt's files (if it wrote any): deleted by markers before completion.
    assert h.table.orphan_files() == []


@pytest.mark.parametrize("point", FAULT_POINTS)
def test_case5_writer_crash_global_failover_replays_batch(tmp_path, point):
    h = StreamHarness(str(tmp_path))
    h.run_batch()
    b = h.start_batch(fault_hooks={1: crash_at(point)})
    h.consume(0, ids(b, 0, 12))
    with pytest.raises(Crash):
        h.consume(1, ids(b, 1, 12))
    summary = h.job_failover()  # the query restarts from the last checkpoint
    assert len(summary["rolled_back"]) == 1  # the crashed batch's instant
    assert h.run_batch(rows_per_task=12) == b  # Spark replays the same batch
    h.assert_exactly_once()


# ---------------------------------------------------------------- case 6: coordinator crash
@pytest.mark.parametrize("point", ["after_ack_before_commit", "mid_commit", "after_commit"])
@pytest.mark.parametrize("drop_previous_ack", [False, True])
def test_case6_coordinator_crash_after_ack(tmp_path, point, drop_previous_ack):
    h = StreamHarness(str(tmp_path))
    h.run_batch()
    h.run_batch(ack=not drop_previous_ack)
    b = h.run_batch(ack=False)
    h.set_coordinator_fault(crash_at(point))
    with pytest.raises(Crash):
        h.checkpoint_complete(b)
    summary = h.restart_coordinator()
    if drop_previous_ack:  # batch b-1's instant came back from the coordinator snapshot
        assert len(summary["recommitted"] + summary["skipped"]) == 1
        # after_commit: the completed instant was written before the crash
        assert (len(summary["skipped"]) == 1) == (point == "after_commit")
    h.run_batch()  # restored writers re-send batch b; then ACK
    h.assert_exactly_once()
    assert set(commits_per_instant(h).values()) == {1}
    assert h.coordinator.pending_instants() == 0


# ---------------------------------------------------------------- case 7: dropped / stale ACK
def test_case7_dropped_ack_subsumed_then_stale_ack_is_noop(tmp_path):
    h = StreamHarness(str(tmp_path))
    h.run_batch()
    b1 = h.run_batch(ack=False)  # ACK dropped
    h.run_batch()  # ACK n+1 commits both, in order
    commits = h.commits()
    assert [c["checkpoint_id"] for c in commits] == [-1, 0, 1]
    assert [c["completed"] for c in commits] == sorted(c["completed"] for c in commits)
    h.checkpoint_complete(b1)  # stale replay
    assert len(h.commits()) == 3
    assert h.recorder.of_kind("ack")[-1] == {"checkpoint_id": b1, "action": "stale_replay"}
    h.assert_exactly_once()


def test_case7_without_subsume_acks_a_dropped_ack_loses_its_batch(tmp_path):
    h = StreamHarness(str(tmp_path), safety=Safety(subsume_acks=False))
    h.run_batch()
    b1 = h.run_batch(ack=False)
    h.run_batch()
    h.checkpoint_complete(b1)  # even the stale ACK does not bring it back
    assert set(h.visible_ids()) == set(h.expected) - batch_ids(h, b1)


# ---------------------------------------------------------------- WriteMeta restore seams
def test_restore_after_coordinator_snapshot(tmp_path):
    h = StreamHarness(str(tmp_path))
    h.run_batch()
    h.run_batch(ack=False)
    h.set_coordinator_fault(crash_at("after_coordinator_snapshot"))
    with pytest.raises(Crash):
        h.start_batch()
    h.restart_coordinator()
    h.run_batch()
    h.assert_exactly_once()


def test_restore_after_writers_sent_metadata_before_spark_recorded_batch(tmp_path):
    h = StreamHarness(str(tmp_path))
    h.run_batch()
    b = h.start_batch()
    for task in range(h.parallelism):
        h.consume(task, ids(b, task, 9))
        h.writers[task].end_of_checkpoint()  # events sent, but the driver dies first
    summary = h.restart_coordinator()
    assert len(summary["rolled_back"]) == 1
    assert h.run_batch() == b
    h.assert_exactly_once()


def test_restore_after_spark_recorded_batch_before_ack(tmp_path):
    h = StreamHarness(str(tmp_path))
    h.run_batch()
    h.run_batch(ack=False)
    h.restart_coordinator()
    assert h.coordinator.status()["awaiting_bootstrap"] == [0]
    h.run_batch()
    h.assert_exactly_once()


def test_restore_after_part_of_multi_instant_commit(tmp_path):
    h = StreamHarness(str(tmp_path))
    h.run_batch()
    h.run_batch(ack=False)
    b = h.run_batch(ack=False)
    h.set_coordinator_fault(crash_at("after_commit"))  # first of two instants committed
    with pytest.raises(Crash):
        h.checkpoint_complete(b)
    summary = h.restart_coordinator()
    assert len(summary["skipped"]) == 1
    h.run_batch()
    h.assert_exactly_once()
    assert set(commits_per_instant(h).values()) == {1}


@pytest.mark.parametrize("coordinator_state", [True, False])
def test_dropped_ack_then_crash_after_next_ack(tmp_path, coordinator_state):
    h = StreamHarness(str(tmp_path), safety=Safety(coordinator_state=coordinator_state))
    h.run_batch()
    b1 = h.run_batch(ack=False)
    b2 = h.run_batch(ack=False)
    h.set_coordinator_fault(crash_at("after_ack_before_commit"))
    with pytest.raises(Crash):
        h.checkpoint_complete(b2)
    h.restart_coordinator()
    h.run_batch()
    if coordinator_state:
        h.assert_exactly_once()
    else:  # batch b1 was only in the coordinator's memory: lost
        assert set(h.visible_ids()) == set(h.expected) - batch_ids(h, b1)


# ---------------------------------------------------------------- blocking vs async
@pytest.mark.parametrize("mode", ["blocking", "async"])
def test_hanging_commit_blocking_times_out_async_progresses(tmp_path, mode):
    h = StreamHarness(str(tmp_path), mode=mode, commit_ack_timeout_s=0.5)
    h.run_batch()
    b = h.run_batch(ack=False)
    release, reached = threading.Event(), threading.Event()
    h.set_coordinator_fault(block_at("after_ack_before_commit", release, reached))
    ack = h.coordinator.notify_checkpoint_complete(b)
    assert reached.wait(GUARD_S)
    nb = h.start_batch()
    if mode == "blocking":
        with pytest.raises(StreamError, match=r"Timeout while waiting for instants \['\d{17}'\]"):
            h.consume(0, ids(nb, 0, 12))
        release.set()
        ack.result(GUARD_S)
        h.assert_exactly_once()
        return
    for task in range(h.parallelism):
        h.consume(task, ids(nb, task, 12))  # writes while the previous commit hangs
    h.checkpoint()
    release.set()
    ack.result(GUARD_S)
    h.checkpoint_complete(nb)
    h.assert_exactly_once()


def test_a_failed_instant_creation_is_reported_to_the_next_request(tmp_path):
    """The creation fails while no request waits on it (the writer is between two polls):
    the next request must get the error, not silently start another creation (which made
    the blocking case above depend on when the writer's polls fell)."""
    h = StreamHarness(str(tmp_path), mode="blocking", commit_ack_timeout_s=0.2)
    h.run_batch()
    b = h.run_batch(ack=False)
    release, reached = threading.Event(), threading.Event()
    h.set_coordinator_fault(block_at("after_ack_before_commit", release, reached))
    ack = h.coordinator.notify_checkpoint_complete(b)
    assert reached.wait(GUARD_S)
    assert h.coordinator.request_instant(b, 0, wait_s=0.0)["status"] == "PENDING"
    creation = h.coordinator._creating[b]
    assert creation.exception(timeout=GUARD_S) is not None  # failed, nobody asking
    reply = h.coordinator.request_instant(b, 0, wait_s=0.0)
    assert reply["status"] == "ERROR" and "Timeout while waiting for instants" in reply["error"]
    assert b not in h.coordinator._creating  # reported once: the next request tries again
    release.set()
    ack.result(GUARD_S)
    assert h.coordinator.request_instant(b, 0, wait_s=5.0)["status"] == "READY"


def test_closing_the_coordinator_releases_a_creation_waiting_for_earlier_commits(tmp_path):
    """Blocking mode at a driver's stop: the next instant's creation waits for a commit that
    will not come, and the interpreter's exit joins its thread: it waited out the whole
    commit_ack_timeout_s (a minute by default) before the driver process could exit."""
    h = StreamHarness(str(tmp_path), mode="blocking", commit_ack_timeout_s=600)
    h.run_batch()
    b = h.run_batch(ack=False)  # never acknowledged: its instant stays pending
    assert h.coordinator.request_instant(b, 0, wait_s=0.0)["status"] == "PENDING"
    creation = h.coordinator._creating[b]
    deadline = time.monotonic() + 30
    while not creation.running():  # waiting inside, not queued (close would cancel that)
        assert time.monotonic() < deadline, "the creation never started"
        time.sleep(0.01)
    h.coordinator.close()
    error = creation.exception(timeout=30)  # at once; 600 s without the wake-up
    assert isinstance(error, StreamError) and "coordinator closed" in str(error)


# ---------------------------------------------------------------- fencing


def _zombie_resumes_after_takeover(
    h: StreamHarness,
) -> tuple[Coordinator, Future[list[str] | None]]:
    """A coordinator paused between a batch's ACK and its commit, a new one taking over,
    then the old one resumed: (the old coordinator, its ACK's future)."""
    h.run_batch()
    b = h.run_batch(ack=False)
    release, reached = threading.Event(), threading.Event()
    h.set_coordinator_fault(block_at("after_ack_before_commit", release, reached))
    zombie_ack = h.coordinator.notify_checkpoint_complete(b)  # then the driver is paused
    assert reached.wait(GUARD_S)
    zombie = h.coordinator
    h.restart_coordinator(close_old=False)  # a new driver takes over
    release.set()  # SIGCONT: the old one resumes its commit
    return zombie, zombie_ack


@pytest.mark.parametrize("fencing", [True, False])
def test_zombie_coordinator_is_fenced(tmp_path, fencing):
    h = StreamHarness(str(tmp_path), safety=Safety(fencing=fencing))
    zombie, zombie_ack = _zombie_resumes_after_takeover(h)
    if fencing:
        with pytest.raises(FencedError):
            zombie_ack.result(GUARD_S)
        h.run_batch()
        h.assert_exactly_once()
        assert zombie.epoch not in h.commit_epochs()[1:]
    else:
        zombie_ack.result(GUARD_S)  # the stale coordinator wrote to the timeline after takeover
        assert zombie.epoch in h.commit_epochs()[1:]
        with pytest.raises(StreamError):
            h.run_batch()  # the new coordinator finds its instant taken from under it
    zombie.close()


def test_a_failed_coordinator_commits_nothing_queued_behind_the_failure(tmp_path):
    """The interleaving a loaded machine produced: the new batch's ACK is dispatched while
    the commit that fails (the zombie took its instant) still waits on the commit thread."""
    h = StreamHarness(str(tmp_path), safety=Safety(fencing=False))
    zombie, zombie_ack = _zombie_resumes_after_takeover(h)
    zombie_ack.result(GUARD_S)
    hold_commits = threading.Event()
    h.coordinator._committer.submit(hold_commits.wait)
    nxt = h.start_batch()  # restored writers re-send batch b: its commit queues behind
    for task in range(h.parallelism):
        h.consume(task, ids(nxt, task, 7))
    h.checkpoint()
    ack = h.coordinator.notify_checkpoint_complete(nxt)
    h.coordinator._meta.submit(lambda: None).result(GUARD_S)  # the ACK is dispatched
    completed_before = h.table.timeline.reload().completed()
    hold_commits.set()
    with pytest.raises(StreamError, match="already completed"):
        ack.result(GUARD_S)
    assert h.table.timeline.reload().completed() == completed_before
    zombie.close()


# ---------------------------------------------------------------- overdue instants
def test_an_acked_instant_not_ready_is_overdue_until_the_next_ack_commits_it(tmp_path):
    h = StreamHarness(str(tmp_path))
    h.run_batch()
    b = h.start_batch()
    for task in range(h.parallelism):
        h.consume(task, ids(b, task, 5))
    h.writers[0].end_of_checkpoint()  # the other tasks' last events are late
    h.checkpoint_complete(b)
    assert h.coordinator.status()["overdue"] == [b - 1]
    for task in range(1, h.parallelism):
        h.writers[task].end_of_checkpoint()
    h.expected.extend(h.batch_rows[b])
    h.run_batch()
    assert h.coordinator.status()["overdue"] == []
    h.assert_exactly_once()


def test_without_subsume_acks_an_abandoned_instant_is_pending_but_not_overdue(tmp_path):
    h = StreamHarness(str(tmp_path), safety=Safety(subsume_acks=False))
    h.run_batch()
    b1 = h.run_batch(ack=False)
    h.run_batch()
    status = h.coordinator.status()
    assert b1 - 1 in status["pending"]  # no ACK will ever commit it
    assert status["overdue"] == []
