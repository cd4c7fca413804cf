"""ACK faults across driver restarts."""

import time
from concurrent.futures import Future
from pathlib import Path

from fault_occurrence import occurrence

from harness.faults.fired import FiredLog
from harness.history import HistoryWriter, read_events
from harness.run_clock import RunClock


def test_ack_fault_counts_survive_a_driver_restart(tmp_path: Path) -> None:
    from harness.faults.driver_faults import DriverFaults

    drop = occurrence("drop_ack", 0, 1.0, 1.0, "coordinator", {"count": 2})
    run_clock = RunClock(t0=time.time() - 5)
    delivered: list[int] = []

    def notify(batch_id: int) -> Future:
        delivered.append(batch_id)
        return Future()

    def driver() -> DriverFaults:  # each driver process builds its own from the run's files
        history = HistoryWriter(tmp_path / "history", "driver")
        return DriverFaults([drop], run_clock, history, FiredLog(tmp_path / "fired"))

    driver().deliver_ack(3, notify)  # dropped (1 of 2), then the driver dies
    restarted = driver()
    for batch in (4, 5, 6):
        restarted.deliver_ack(batch, notify)
    assert delivered == [5, 6]  # ACK 4 was the second and last drop
    dropped = [e for e in read_events(tmp_path / "history") if e.get("action") == "dropped"]
    assert [e["checkpoint_id"] for e in dropped] == [3, 4]
