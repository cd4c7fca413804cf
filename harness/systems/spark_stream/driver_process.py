"""Start, watch, stop and kill a system's runtime-side script from the project's side.

The script runs with its runtime's python in a process group of its own (its JVM is a
child of it), so a kill fault takes the whole group at once, as a crashed host would,
and a stop leaves nothing behind. Its stdout JSON lines (started, batch, stopped, ...)
are collected with the runner's monotonic time of arrival.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from harness.history import HistoryWriter
from harness.history_events import Kind
from harness.runner.errors import RunError
from harness.systems.spark_stream.runtime_cache import SparkRuntime


@dataclass(frozen=True)
class DriverLine:
    seen_s: float  # time.monotonic() when the line arrived
    record: dict[str, Any]


def kill_group(process: subprocess.Popen[Any]) -> None:
    """SIGKILL the process's group (it leads one: start_new_session), then reap it. Also
    after a clean exit: a JVM that outlived its python must not outlive the run."""
    with contextlib.suppress(ProcessLookupError):  # already gone, and its group with it
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def run_group(cmd: list[str], log_path: Path, timeout_s: float) -> int:
    """Run `cmd` in a group of its own, output to `log_path`; the group is gone after. A
    run past `timeout_s` is killed: its exit code is then -9 (SIGKILL)."""
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout_s)
        kill_group(process)
    return process.returncode


class DriverProcess:
    """One run of a runtime-side script (a stream driver, a batch writer); `lines` grows
    as it reports."""

    def __init__(
        self,
        runtime: SparkRuntime,
        config: dict[str, Any],
        work: Path,
        name: str,
        script: Path,
    ) -> None:
        self.config_path = work / f"{name}.json"
        self.config_path.write_text(json.dumps(config))
        self.stop_file = Path(config["stop_file"])
        self.stop_file.unlink(missing_ok=True)  # a restart must not see the last stop
        self.log_path = work / f"{name}.log"
        self._log: IO[str] = open(self.log_path, "w")  # noqa: SIM115 - closed in wait()
        self.process = subprocess.Popen(
            [runtime.python, str(script), str(self.config_path)],
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            start_new_session=True,
        )
        self.lines: list[DriverLine] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, name=f"{name}-lines", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for text in self.process.stdout:
            try:
                record = json.loads(text)
            except json.JSONDecodeError:  # pyspark or the JVM printed to stdout
                record = {"event": "output", "text": text.rstrip()}
            with self._changed:
                self.lines.append(DriverLine(time.monotonic(), record))
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def events(self, kind: str) -> list[dict[str, Any]]:
        with self._changed:
            return [line.record for line in self.lines if line.record.get("event") == kind]

    def wait_for(self, kinds: Sequence[str], timeout_s: float) -> dict[str, Any] | None:
        """The first line of one of `kinds`; None once the driver exits or time runs out."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while True:
                for line in self.lines:
                    if line.record.get("event") in kinds:
                        return line.record
                left = deadline - time.monotonic()
                if left <= 0 or (self.process.poll() is not None and not self._reader.is_alive()):
                    return None
                self._changed.wait(min(left, 0.5))

    def signal_kill(self) -> None:
        """SIGKILL the group and return at once (from a watch thread that must not block);
        `kill()` or `stop()` reaps it later."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)

    def kill(self) -> None:
        kill_group(self.process)
        self._finish()

    def stop(self, timeout_s: float = 120.0) -> int:
        """Ask for a clean stop (the stop file); kill the group if it does not end in time."""
        self.stop_file.touch()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout_s)
        kill_group(self.process)
        self._finish()
        return self.process.returncode

    def _finish(self) -> None:
        self._reader.join(timeout=10)
        self._log.close()


def start_stream_driver(
    runtime: SparkRuntime,
    config: dict[str, Any],
    logs: Path,
    name: str,
    script: Path,
    label: str,
    history: HistoryWriter,
    timeout_s: float,
) -> DriverProcess:
    """Start a system's stream driver and wait for its query to run (recorded as a driver
    start); a RunError with its log's last lines if it does not start in `timeout_s`."""
    driver = DriverProcess(runtime, config, logs, name, script)
    line = driver.wait_for(("started", "failed"), timeout_s)
    if line is None or line.get("event") != "started":
        driver.kill()
        tail = "\n".join(driver.log_path.read_text().splitlines()[-5:])
        raise RunError(f"{label}'s stream driver did not start; see {driver.log_path}: {tail}")
    history.record(Kind.DRIVER_START, pid=driver.process.pid, restored_batch=None)
    return driver
