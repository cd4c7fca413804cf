"""The storage operations each lock hold performs, counted exactly (a storage hook), so
the floor cannot silently regress: an instant creation holds the lock for the TrueTime
wait plus its REQUESTED and INFLIGHT writes, a commit for the wait plus its completed
write; the `.truetime` record is written inside the wait (fenced like the timeline
writes: still one storage operation, engine/table/fencing.py). Timed figures are in
tests/benchmarks/engine/test_lock_hold_bench.py."""

from __future__ import annotations

import pytest

from engine.config import TableConfig
from engine.stream.state import EpochStore
from engine.stream.table_port import enter_epoch
from engine.table import Table
from tests.unit.engine.engine_helpers import HoldRecorder, held_names, rows

REQUESTED = ("put", ".hoodie/timeline/T.commit.requested")
INFLIGHT = ("put", ".hoodie/timeline/T.inflight")
COMPLETED = ("put", ".hoodie/timeline/T_T.commit")
TRUETIME = ("put", ".hoodie/.truetime")
LOOK_AGAIN = [  # a hold after someone else's: the timeline and the generation record
    ("read", ".hoodie/.truetime"),
    ("list", ".hoodie/timeline"),
    ("read", ".hoodie/timeline/history/_version_"),
]


def cycle(table: Table, first_id: int) -> None:
    instant = table.start_instant()
    stats = table.write_files(instant, rows(range(first_id, first_id + 8)), op="insert")
    table.commit(instant, stats)


@pytest.fixture
def coordinator_table(tmp_path) -> Table:
    """Opened as the stream coordinator's: fenced by its epoch, its own FileLock."""
    path = str(tmp_path / "t")
    Table.create(path, TableConfig(file_groups=4), rows([0]).schema, max_skew_ms=0).close()
    table = Table.open(path, max_skew_ms=1, heartbeat_interval_s=0, writer_id="coordinator")
    enter_epoch(table, EpochStore(table.storage).advance())
    yield table
    table.close()


def test_each_hold_does_only_the_writes_that_make_the_instant_durable(coordinator_table):
    table = coordinator_table
    recorder = HoldRecorder(table)
    cycle(table, 0)  # the first hold makes the fence grant and lists once
    recorder.clear()
    cycle(table, 100)
    creation, commit = recorder.holds
    assert held_names(creation) == [TRUETIME, REQUESTED, INFLIGHT]
    assert held_names(commit) == [TRUETIME, COMPLETED]
    for hold in (creation, commit):
        # The lock's own operations: a blind CAS plus its check; one CAS to free it and
        # the collection of superseded versions, after the mutex is free.
        assert [op for op, _ in hold.acquire] == ["put", "list"]
        assert [op for op, _ in hold.release] == ["put", "delete", "delete"]


def test_a_hold_after_another_writers_reads_the_timeline_and_the_record_again(
    coordinator_table,
):
    table = coordinator_table
    other = Table.open(table.path, max_skew_ms=0, heartbeat_interval_s=0, writer_id="other")
    recorder = HoldRecorder(table)
    cycle(table, 0)
    cycle(other, 100)  # the lock passed to someone else: nothing cached may be trusted
    recorder.clear()
    cycle(table, 200)
    creation, commit = recorder.holds
    # Its lock token changed too: the old grant goes, the new one is made by the first
    # fenced write, the `.truetime` record's (once per token, not per hold).
    assert held_names(creation) == [
        ("delete", ".hoodie/.fence/e0/G"),
        *LOOK_AGAIN,
        ("put", ".hoodie/.fence/e0/G"),
        TRUETIME,
        REQUESTED,
        INFLIGHT,
    ]
    assert held_names(commit) == [TRUETIME, COMPLETED]  # follows its own creation
    other.close()
