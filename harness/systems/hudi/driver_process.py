"""Start, watch, stop and kill stream_driver.py from the project's side.

The driver runs with the Hudi runtime's python in a process group of its own (its JVM is
a child of it), so a kill fault takes the whole group at once, as a crashed host would,
and a stop leaves nothing behind. Its stdout JSON lines (started, batch, stopped, ...)
are collected with the runner's monotonic time of arrival.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from harness.pipeline.events import SPARK_SCHEMA, EventSpec
from harness.systems.hudi.runtime import SparkRuntime

DRIVER = Path(__file__).with_name("stream_driver.py")
TABLE_NAME = "instantbench"


@dataclass(frozen=True)
class DriverLine:
    seen_s: float  # time.monotonic() when the line arrived
    record: dict[str, Any]


# A micro-batch admits at most the files this many triggers land (one a second): a stream
# that starts late, or restarts after a kill, catches up in bounded batches, as Hudi users
# bound them (maxFilesPerTrigger), instead of one batch that swallows the whole backlog
# (a run whose first batch held every landed file judged a single batch).
CATCH_UP_TRIGGERS = 4


def stream_config(
    runtime: SparkRuntime,
    spec: EventSpec,
    work: Path,
    *,
    table_type: str = "mor",
    trigger_s: float = 2.0,
    master: str = "local[2,4]",
    identifier: str = "instantbench-hudi-0",
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The driver's config for a run laid out under `work` (landing/, table/, checkpoint/)."""
    return {
        "master": master,
        "jars": list(runtime.jars),
        "landing_dir": str(work / "landing"),
        "schema": SPARK_SCHEMA,
        "table_path": str(work / "table"),
        "table_name": TABLE_NAME,
        "table_type": table_type,
        "mode": spec.mode,
        "record_key": "id",
        "ordering_field": "event_id",
        "identifier": identifier,
        "file_groups": spec.file_groups,
        "checkpoint_dir": str(work / "checkpoint"),
        "trigger_s": trigger_s,
        "max_files_per_trigger": CATCH_UP_TRIGGERS * max(1, math.ceil(trigger_s)),
        "stop_file": str(work / "STOP"),
        **(extra or {}),
    }


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
    """One run of a runtime-side script (stream_driver.py unless told; batch_writer.py
    runs the same way); `lines` grows as it reports."""

    def __init__(
        self,
        runtime: SparkRuntime,
        config: dict[str, Any],
        work: Path,
        name: str,
        script: Path = DRIVER,
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


HUDI_EXCEPTION = re.compile(r"(org\.apache\.hudi\.exception\.\w+: .*)")


def hudi_exception(log_path: Path, limit: int = 300) -> str | None:
    """The last of Hudi's exceptions in a process's log (its message, cut at `limit`)."""
    try:
        text = log_path.read_text(errors="replace")
    except OSError:
        return None
    found = HUDI_EXCEPTION.findall(text)
    return found[-1][:limit] if found else None
