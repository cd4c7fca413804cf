"""SIGINT and SIGTERM take one path (harness.runner.interrupt), and a stopped driver leaves
no process behind, not even one that left its process group (PySpark's worker daemon)."""

import os
import signal
import sys
import time

import pytest

from harness.runner.driver_process import DriverProcess
from harness.runner.interrupt import Interrupted, signals_held, signals_interrupt
from infra.cluster.procs import alive


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_each_signal_raises_interrupted_and_the_handler_is_restored(sig):
    before = signal.getsignal(sig)
    with pytest.raises(Interrupted) as info, signals_interrupt():
        os.kill(os.getpid(), sig)
        time.sleep(5)  # the handler runs before this returns
    assert info.value.signum == sig and info.value.name == sig.name
    assert signal.getsignal(sig) == before


def test_held_signals_wait_for_the_clean_up_then_are_raised():
    with signals_held() as held:
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGINT)
        assert held.arrived()  # noted, not raised: the clean-up goes on
        taken = held.take()
    assert taken is not None and taken.signum == signal.SIGTERM  # the first one counts
    with pytest.raises(Interrupted), signals_held():
        os.kill(os.getpid(), signal.SIGTERM)  # not taken: raised when the block ends


# A stand-in driver: its child makes a process group of its own, as pyspark.daemon does;
# each writes its pid (atomically), then waits.
WRITE_PID = "os.replace(f'{p}.tmp', p) if open(f'{p}.tmp', 'w').write(str(os.getpid())) else 0"
CHILD = f"import os, sys, time; os.setpgid(0, 0); p = sys.argv[1]; {WRITE_PID}; time.sleep(120)"
FAKE_DRIVER = f"""
import os, subprocess, sys, time
p = sys.argv[1]
subprocess.Popen([sys.executable, "-c", {CHILD!r}, p + ".child"])
{WRITE_PID}
time.sleep(120)
"""


class FakeDriver(DriverProcess):
    command = (sys.executable, "-c", FAKE_DRIVER)


def test_killing_a_driver_reaps_processes_outside_its_group(tmp_path):
    pid_file = tmp_path / "pids"
    driver = FakeDriver(pid_file, tmp_path / "driver-0.log")
    driver.start()
    try:
        deadline = time.monotonic() + 30
        while not (pid_file.exists() and pid_file.with_suffix(".child").exists()):
            assert time.monotonic() < deadline, "the fake driver did not start"
            time.sleep(0.05)
        child = int(pid_file.with_suffix(".child").read_text())
        assert os.getpgid(child) != os.getpgid(driver.pid)  # killpg alone misses it
        assert set(driver.processes()) >= {driver.pid, child}
        driver.kill()
        assert not alive(driver.pid) and not alive(child)
        assert driver.processes() == []
    finally:
        driver.kill()
