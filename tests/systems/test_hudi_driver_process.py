"""The driver's process group: lines collected, stop by file, kill leaves nothing behind."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from harness.pipeline.events import EventSpec
from harness.systems.hudi.stream_config import DRIVER, stream_config
from harness.systems.spark_stream.driver_process import DriverProcess, run_group
from harness.systems.spark_stream.runtime_cache import SparkRuntime

# Stands in for the runtime's python running stream_driver.py: reports, leaves a child
# behind (as pyspark leaves its JVM), and ends when the stop file appears.
FAKE_PYTHON = f"""#!/bin/sh
stop=$({sys.executable} -c "import json,sys; print(json.load(open(sys.argv[1]))['stop_file'])" "$2")
sleep 60 &
echo $! > "$(dirname "$stop")/child.pid"
echo '{{"event": "started", "startup_s": 0.1}}'
echo 'pyspark says something'
echo '{{"event": "batch", "batch_id": 0, "rows": 5}}'
while [ ! -e "$stop" ]; do sleep 0.05; done
echo '{{"event": "stopped"}}'
"""


def _gone(pid: int, within_s: float = 5.0) -> bool:
    """Dead: no such process, or a zombie (killed, waiting for init to reap it)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                return True
        except (FileNotFoundError, ProcessLookupError):
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def runtime(tmp_path: Path) -> SparkRuntime:
    python = tmp_path / "fake-python"
    python.write_text(FAKE_PYTHON)
    python.chmod(0o755)
    return SparkRuntime(str(python), "3.5.9", "2.12", ("/cache/hudi.jar",), ("00" * 32,))


def _driver(runtime: SparkRuntime, work: Path) -> DriverProcess:
    spec = EventSpec(mode="append", seed=1, partitions=2)
    return DriverProcess(runtime, stream_config(runtime, spec, work), work, "driver", DRIVER)


def test_lines_then_a_clean_stop_that_takes_the_whole_group(
    tmp_path: Path, runtime: SparkRuntime
) -> None:
    driver = _driver(runtime, tmp_path)
    started = driver.wait_for(("started", "failed"), 10)
    assert started == {"event": "started", "startup_s": 0.1}
    assert driver.wait_for(("batch",), 10) is not None
    assert driver.events("output") == [{"event": "output", "text": "pyspark says something"}]
    child = int((tmp_path / "child.pid").read_text())
    assert driver.stop(timeout_s=10) == 0
    assert driver.events("stopped") == [{"event": "stopped"}]
    assert _gone(child)  # the left-behind child went with the group


def test_kill_takes_the_group_at_once(tmp_path: Path, runtime: SparkRuntime) -> None:
    driver = _driver(runtime, tmp_path)
    assert driver.wait_for(("started",), 10) is not None
    child = int((tmp_path / "child.pid").read_text())
    driver.signal_kill()  # what the timeline watch's seam calls: returns at once
    driver.kill()  # reaps
    assert driver.process.returncode == -9
    assert _gone(child)
    assert driver.wait_for(("stopped",), 0.1) is None


def test_run_group_kills_what_outlives_its_time(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    script = f"sleep 60 & echo $! > {pid_file}; wait"
    t0 = time.monotonic()
    code = run_group(["sh", "-c", script], tmp_path / "log", timeout_s=0.5)
    assert code == -9 and time.monotonic() - t0 < 10
    assert _gone(int(pid_file.read_text()))
    assert run_group(["sh", "-c", "echo hi"], tmp_path / "log", timeout_s=10) == 0
    assert (tmp_path / "log").read_text() == "hi\n"
