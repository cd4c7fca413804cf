"""The driver's table services (harness/pipeline/table_services.py): one cycle rolls back a
failed write whose heartbeat expired, cleans, and archives; each leaves its event."""

from __future__ import annotations

from engine.clock import AdjustableClock, SystemClock
from engine.table import Table, cleaning
from harness.history import HistoryWriter, read_events
from harness.pipeline.table_services import TableServices
from tests.unit.harness.test_isolation_dirty_reads import new_table, rows


def test_one_cycle_rolls_back_cleans_and_archives(tmp_path):
    table = new_table(tmp_path)
    for _ in range(6):
        instant = table.start_instant()
        table.commit(instant, table.write_files(instant, rows(range(4))))
    crashed = Table.open(table.path, max_skew_ms=0, writer_id="batch_writer:0")
    failed = crashed.start_instant()  # its writer dies: the heartbeat stops
    crashed.write_files(failed, rows(range(100, 104)))
    crashed.heartbeats.close()
    later = AdjustableClock(SystemClock())
    later.set_offset_ms(3_600_000)  # the heartbeat expired long ago
    driver = Table.open(table.path, clock=later, max_skew_ms=0, writer_id="coordinator")
    history = HistoryWriter(tmp_path / "history", "driver")
    services = TableServices(driver, 1.0, history, archive_keep=2, clean_retain_commits=2)
    services.run_once()
    events = {e["kind"]: e for e in read_events(tmp_path / "history")}
    assert events["failed_writes_rolled_back"]["instants"] == [failed.requested_time]
    assert events["clean"]["files"] > 0
    assert events["archive"]["instants"] > 0
    timeline = driver.timeline.reload()
    assert timeline.is_rolled_back(failed.requested_time)
    # Hudi's archiver: `keep` commits stay, and the rollback and clean completed after them
    assert [i.action for i in timeline.completed()] == ["commit", "commit", "rollback", "clean"]
    assert cleaning.retained_from(driver) is not None
    assert sorted(driver.snapshot()["id"].to_pylist()) == [0, 1, 2, 3]


def test_stopping_runs_one_last_cycle(tmp_path):
    """However short the run, its last commits are cleaned: no cycle ran before the stop."""
    table = new_table(tmp_path)
    for _ in range(3):
        instant = table.start_instant()
        table.commit(instant, table.write_files(instant, rows(range(4))))
    history = HistoryWriter(tmp_path / "history", "driver")
    services = TableServices(table, 3600.0, history, archive_keep=0, clean_retain_commits=1)
    services.start()
    services.stop()
    assert [e["kind"] for e in read_events(tmp_path / "history")] == ["clean"]


def test_pulls_and_time_travel_are_complete_across_the_archive_boundary(tmp_path):
    table = new_table(tmp_path)
    done = []
    for k in range(6):
        instant = table.start_instant()
        done.append(
            table.commit(instant, table.write_files(instant, rows(range(k * 10, k * 10 + 10))))
        )
    history = HistoryWriter(tmp_path / "history", "driver")
    TableServices(table, 1.0, history, archive_keep=2, clean_retain_commits=0).run_once()
    assert [e["kind"] for e in read_events(tmp_path / "history")] == ["archive"]
    fresh = Table.open(table.path)  # reads the archived timeline from storage
    assert fresh.incremental(None, done[-1]).num_rows == 60
    assert fresh.incremental(done[1], done[4]).num_rows == 30  # archived and active instants
    assert fresh.as_of(done[2]).num_rows == 30


def test_a_cycle_that_raises_is_recorded_and_stops_the_service(tmp_path, monkeypatch):
    """The driver's main loop stops on `error` (harness/pipeline/driver.py): a table service
    that raised must never leave the driver streaming on with it dead."""
    table = new_table(tmp_path)
    history = HistoryWriter(tmp_path / "history", "driver")
    services = TableServices(table, 3600.0, history, archive_keep=1, clean_retain_commits=1)

    def clean(*_args):
        raise OSError("delete refused")

    monkeypatch.setattr(cleaning, "clean", clean)
    services.start()
    services.stop()  # its last cycle raises
    assert isinstance(services.error, OSError)
    (failed,) = read_events(tmp_path / "history")
    assert failed["kind"] == "table_service_failed" and failed["fenced"] is False
    assert "delete refused" in failed["error"]
