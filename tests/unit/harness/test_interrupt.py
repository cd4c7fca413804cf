"""SIGINT and SIGTERM take one path (harness.runner.interrupt), and a stopped driver leaves
no process behind, not even one that left its process group (PySpark's worker daemon)."""

import json
import os
import signal
import sys
import time

import pytest

from harness.runner.driver_process import DriverProcess, reap_drivers
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


def started(tmp_path, n: int = 0) -> tuple[DriverProcess, int]:
    """A running fake driver (its log in tmp_path) and the pid of its child."""
    pid_file = tmp_path / f"pids-{n}"
    driver = FakeDriver(pid_file, tmp_path / f"driver-{n}.log")
    driver.start()
    deadline = time.monotonic() + 30
    while not (pid_file.exists() and pid_file.with_suffix(".child").exists()):
        assert time.monotonic() < deadline, "the fake driver did not start"
        time.sleep(0.05)
    return driver, int(pid_file.with_suffix(".child").read_text())


def test_killing_a_driver_reaps_processes_outside_its_group(tmp_path):
    driver, child = started(tmp_path)
    try:
        assert os.getpgid(child) != os.getpgid(driver.pid)  # killpg alone misses it
        assert set(driver.processes()) >= {driver.pid, child}
        driver.kill()
        assert not alive(driver.pid) and not alive(child)
        assert driver.processes() == []
    finally:
        driver.kill()


def test_every_driver_of_a_run_is_reaped_even_one_nobody_tracks(tmp_path):
    logs, other = tmp_path / "logs", tmp_path / "logs-of-another-run"
    logs.mkdir()
    other.mkdir()
    lost, lost_child = started(other, 0)  # left alone
    drivers: list[tuple[DriverProcess, int]] = []
    try:
        drivers += [started(logs, n) for n in (1, 2)]
        pids = {p for d, child in drivers for p in (d.pid, child)}
        assert set(reap_drivers(logs)) >= pids
        assert not any(alive(p) for p in pids)
        assert alive(lost.pid) and alive(lost_child)
    finally:
        lost.kill()
        for d, _ in drivers:
            d.proc.wait()


def test_a_signal_while_the_cluster_starts_still_writes_an_unknown_result(tmp_path, monkeypatch):
    from harness.runner import run as run_module
    from harness.scenario import validate_scenario

    def interrupted_start(scenario, paths):
        raise Interrupted(signal.SIGTERM)  # as ClusterBackend.up() re-raises it after down()

    monkeypatch.setattr(run_module, "start_cluster", interrupted_start)
    scenario = validate_scenario({"name": "s", "cluster": {"backend": "standalone"}})
    with pytest.raises(Interrupted) as info:
        run_module.run_scenario(scenario, tmp_path, quiet=True)
    result = json.loads((info.value.run_dir / "result.json").read_text())
    assert result["verdict"] == "unknown"
    assert result["error"].startswith("interrupted by SIGTERM during start-up")


def test_a_cluster_that_cannot_start_stops_the_run_s_zookeeper(tmp_path, monkeypatch):
    """The run's lock service (a real ZooKeeper for engine.lock.provider zookeeper) is
    started before the cluster: a cluster that fails to start must not leave it running."""
    from harness.runner import run as run_module
    from harness.scenario import validate_scenario
    from infra.cluster import ClusterError

    stopped = []

    class Lock:
        def stop(self) -> None:
            stopped.append(True)

    def busy(scenario, paths):
        raise ClusterError("127.0.0.10:7077 is in use")

    monkeypatch.setattr(run_module, "start_run_lock", lambda scenario, paths, hosts: Lock())
    monkeypatch.setattr(run_module, "start_cluster", busy)
    scenario = validate_scenario({"name": "s", "cluster": {"backend": "standalone"}})
    with pytest.raises(ClusterError):
        run_module.run_scenario(scenario, tmp_path, quiet=True)
    assert stopped == [True]
