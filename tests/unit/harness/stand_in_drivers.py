"""A supervisor over stand-in drivers: real processes that sleep and ignore the stop file,
so a test forces what a driver shows (its status file) instead of waiting for Spark."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.faults.fired import FiredLog
from harness.faults.schedule import Occurrence
from harness.history import HistoryWriter
from harness.runner.driver_process import DriverProcess
from harness.runner.supervisor import Supervisor


@contextlib.contextmanager
def stand_in_supervisor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, faults: list[Occurrence[Any]]
) -> Iterator[Supervisor]:
    """A started supervisor with `faults`; its status file is tmp_path / "status.json"."""
    monkeypatch.setattr(
        DriverProcess, "command", (sys.executable, "-c", "import time; time.sleep(120)")
    )
    logs = tmp_path / "logs"
    logs.mkdir()
    sup = new_supervisor(tmp_path, logs, faults)
    sup.start()
    try:
        yield sup
    finally:
        sup.stop(0.5)  # the stand-in drivers ignore the stop file: killed


def new_supervisor(
    tmp_path: Path, logs: Path, faults: list[Occurrence[Any]], **kwargs: Any
) -> Supervisor:
    """A supervisor of a run in tmp_path (not started)."""
    return Supervisor(
        tmp_path / "driver.json",
        tmp_path / "stop",
        tmp_path / "status.json",
        logs,
        HistoryWriter(tmp_path / "history", "runner"),
        faults,
        FiredLog(tmp_path / "fired"),
        **kwargs,
    )
