"""The end of a system's run, Hudi's and the formats' alike: the batch writers asked to stop
first (each ends its transaction while the stream drains), then the stream's driver (it
drains first), any earlier driver still alive killed, then the writers waited for and
their transactions recorded; what did not stop cleanly, in words."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from harness.history import HistoryWriter
from harness.history_events import Kind
from harness.systems.spark_stream.batch_writers import BatchWriters
from harness.systems.spark_stream.driver_process import DriverProcess


def stop_stream(
    drivers: list[DriverProcess],
    writers: BatchWriters | None,
    history: HistoryWriter,
    timeout_s: float,
    who: str,
    logs: Path,
    cause_of: Callable[[Path], str | None] = lambda log: None,
) -> str | None:
    """Stop the run's processes. `who` names the system ("Hudi", "Delta Lake"); `cause_of`
    reads the cause of a driver's failure from its log (None: none found)."""
    if writers is not None:
        writers.request_stop()
    problem = _stop_drivers(drivers, history, timeout_s, who, cause_of)
    if writers is not None:
        codes = writers.stop(timeout_s)
        writers.record(history)
        if any(c != 0 for c in codes) and problem is None:
            problem = f"a batch writer of {who} did not stop cleanly (exits {codes}); see {logs}"
    return problem


def _stop_drivers(
    drivers: list[DriverProcess],
    history: HistoryWriter,
    timeout_s: float,
    who: str,
    cause_of: Callable[[Path], str | None],
) -> str | None:
    if not drivers:
        return None
    driver = drivers[-1]
    code = driver.stop(timeout_s)
    for earlier in drivers[:-1]:
        if earlier.process.poll() is None:
            earlier.kill()
    history.record(Kind.DRIVER_EXIT, pid=driver.process.pid, code=code)
    if code == 0:
        return None
    cause = cause_of(driver.log_path)
    what = f"{who}'s stream driver did not stop cleanly (exit {code}); see {driver.log_path}"
    return what + (f": {cause}" if cause else "")
