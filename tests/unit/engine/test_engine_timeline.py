"""Instants, the active timeline and the archived LSM timeline."""

from __future__ import annotations

import pytest
from engine_helpers import rows

from engine.config import Safety
from engine.errors import CorruptInstantError, InstantExistsError
from engine.storage import Storage
from engine.table import Table
from engine.timeline.active import TIMELINE_DIR, ActiveTimeline
from engine.timeline.archive import HISTORY_DIR
from engine.timeline.instant import Instant, parse_file_name


def test_file_names_round_trip():
    req = Instant("20240101000000000", "commit", "requested")
    assert req.file_name == "20240101000000000.commit.requested"
    done = req.with_state("completed", "20240101000000500")
    assert done.file_name == "20240101000000000_20240101000000500.commit"
    for i in (req, req.with_state("inflight"), done):
        assert parse_file_name(i.file_name) == i
    # Hudi's inflight commit has no action in its name; other inflight instants do.
    assert req.with_state("inflight").file_name == "20240101000000000.inflight"
    delta = Instant("20240101000000000", "deltacommit", "inflight")
    assert delta.file_name == "20240101000000000.deltacommit.inflight"
    assert parse_file_name("20240101000000000.commit.inflight") is None  # no instant to Hudi
    for other in (".tmp-abc-x", "2024.commit", "20240101000000000.bogus.requested", "_version_"):
        assert parse_file_name(other) is None
    with pytest.raises(ValueError):
        Instant("20240101000000000", "commit", "completed")


@pytest.fixture
def timeline(tmp_path) -> ActiveTimeline:
    storage = Storage(str(tmp_path))
    storage.makedirs(TIMELINE_DIR)
    return ActiveTimeline(storage).reload()


def test_transitions_and_queries(timeline):
    a = timeline.create_requested("commit", "20240101000000001")
    b = timeline.create_requested("deltacommit", "20240101000000002")
    a = timeline.transition_to_inflight(a)
    timeline.complete(b, "20240101000000009", {"x": 1})
    timeline.complete(a, "20240101000000010", {"x": 2})
    timeline.reload()
    assert [i.requested_time for i in timeline.completed()] == [
        "20240101000000002",
        "20240101000000001",
    ]
    assert timeline.completion_time_of("20240101000000001") == "20240101000000010"
    assert [i.requested_time for i in timeline.completed_in("20240101000000009", None)] == [
        "20240101000000001"
    ]
    assert timeline.max_instant_time() == "20240101000000010"
    assert timeline.read_metadata("20240101000000001").extra == {"x": 2}
    assert timeline.pending() == []
    assert sorted(timeline.storage.list(TIMELINE_DIR)) == [
        "20240101000000001_20240101000000010.commit",
        "20240101000000002_20240101000000009.deltacommit",
    ]


def test_requested_time_collision(timeline):
    timeline.create_requested("commit", "20240101000000001")
    with pytest.raises(InstantExistsError, match=r"20240101000000001\.commit\.requested"):
        timeline.create_requested("commit", "20240101000000001")
    with pytest.raises(InstantExistsError, match="20240101000000001"):
        timeline.create_requested("deltacommit", "20240101000000001")  # other action, same time
    done = timeline.complete(
        Instant("20240101000000001", "commit", "inflight"), "20240101000000002", {}
    )
    assert done.is_completed
    with pytest.raises(InstantExistsError):  # pending files are gone, the time is still taken
        timeline.create_requested("commit", "20240101000000001")


def test_collision_without_put_if_absent_overwrites(tmp_path):
    storage = Storage(str(tmp_path))
    storage.makedirs(TIMELINE_DIR)
    tl = ActiveTimeline(storage, Safety(put_if_absent=False))
    tl.create_requested("commit", "20240101000000001", {"writer": "a"})
    tl.create_requested("commit", "20240101000000001", {"writer": "b"})
    requested = tl.reload().read_metadata(Instant("20240101000000001", "commit", "requested"))
    assert requested.extra == {"writer": "b"}


@pytest.mark.parametrize("content", [b"", b"{not json", b"[1, 2]"])
def test_corrupt_instant_file_is_named(make_table, content):
    t = make_table()
    with t.transaction() as tx:
        tx.write(rows([1]))
    (done,) = t.timeline.completed()
    path = t.storage.full_path(f"{TIMELINE_DIR}/{done.file_name}")
    with open(path, "wb") as f:
        f.write(content)
    with pytest.raises(CorruptInstantError) as err:
        Table.open(t.path).snapshot()
    assert done.file_name in str(err.value) and err.value.file == path


def _commit_n(t: Table, n: int) -> list[str]:
    out = []
    for i in range(n):
        with t.transaction() as tx:
            tx.write(rows([i]))
        out.append(tx.completion_time)
    return out


def test_archive_moves_old_instants_and_queries_cross_the_boundary(make_table):
    t = make_table()
    times = _commit_n(t, 12)
    before = {c: t.as_of(c).sort_by("id") for c in times}
    everything = t.incremental(None)
    assert t.archive(keep=4) == 8
    fresh = Table.open(t.path)
    assert len(fresh.timeline.completed()) == 4
    assert len(fresh.timeline.completed(include_archived=True)) == 12
    assert len(fresh.timeline.archive) == 8
    archived = fresh.timeline.archive.instants()[0]
    assert fresh.timeline.completion_time_of(archived.requested_time) == times[0]
    assert fresh.timeline.get(archived.requested_time) == archived
    assert [i.completion_time for i in fresh.timeline.completed_in(times[5], times[9])] == times[
        6:10
    ]
    assert fresh.incremental(None).sort_by("id").equals(everything.sort_by("id"))
    assert fresh.incremental(times[6], times[8]).column("id").to_pylist() == [7, 8]
    for c, answer in before.items():
        assert fresh.as_of(c).sort_by("id").equals(answer)
    assert fresh.timeline.read_metadata(archived.requested_time).num_files == 1
    assert fresh.timeline.max_instant_time() == times[-1]


def test_archive_never_passes_the_earliest_pending_instant(make_table):
    t = make_table()
    _commit_n(t, 2)
    stuck = t.start_instant()
    _commit_n(t, 3)
    assert t.archive(keep=0) == 2
    assert [i.requested_time for i in t.pending_instants()] == [stuck.requested_time]


def test_archive_compacts_level0_runs_in_batches_of_ten(make_table):
    t = make_table()
    times = _commit_n(t, 13)
    for _ in range(12):  # one instant per archive call: one level-0 run each
        assert t.archive(keep=len(t.timeline.completed()) - 1) == 1
    runs = [n for n in t.storage.list(HISTORY_DIR) if n.endswith(".parquet")]
    levels = sorted(int(n.rsplit("_", 1)[1].split(".")[0]) for n in runs)
    assert levels == [0, 0, 1]  # ten level-0 runs became one level-1 run
    fresh = Table.open(t.path)
    assert [i.completion_time for i in fresh.timeline.completed(include_archived=True)] == times
    assert sorted(fresh.snapshot().column("id").to_pylist()) == list(range(13))
