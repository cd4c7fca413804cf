"""The machine lanes (tests/conftest.py): at most MACHINE_LANES tests that start Spark or a
cluster run at once, never two in one lane (one address block), and a whole-machine test
runs with no other of them beside it."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from types import ModuleType

CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"
# Fake machine tests: each notes its lane, its address block and when it ran.
TESTS = """
import json, os, time, pytest

def _note(name, lane):
    start = time.time()
    time.sleep(0.3)
    with open(os.path.join(os.path.dirname(__file__), name + ".json"), "w") as f:
        json.dump({"lane": lane, "host": os.environ["INSTANTBENCH_MASTER_HOST"],
                   "start": start, "end": time.time()}, f)

@pytest.mark.spark
@pytest.mark.parametrize("i", range(6))
def test_spark(i, machine_lane):
    _note(f"spark-{i}", machine_lane)

@pytest.mark.cluster
def test_cluster(machine_lane):
    _note("cluster", machine_lane)

@pytest.mark.spark
@pytest.mark.whole_machine
def test_whole(machine_lane):
    _note("whole", machine_lane)

@pytest.mark.parametrize("i", range(8))
def test_unit(i, machine_lane):
    assert machine_lane is None and "INSTANTBENCH_MASTER_HOST" not in os.environ
"""


def _conftest() -> ModuleType:
    spec = importlib.util.spec_from_file_location("lanes_conftest", CONFTEST)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _overlap(a: dict, b: dict) -> bool:
    return a["start"] < b["end"] and b["start"] < a["end"]


def test_machine_tests_under_xdist_keep_to_their_lanes(tmp_path: Path, monkeypatch) -> None:
    shutil.copy(CONFTEST, tmp_path / "conftest.py")
    (tmp_path / "test_lane.py").write_text(TESTS)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n spark\n cluster\n whole_machine\n")
    monkeypatch.setenv("INSTANTBENCH_LANE_DIR", str(tmp_path / "lanes"))  # not the machine's
    monkeypatch.delenv("INSTANTBENCH_MASTER_HOST", raising=False)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "3"]
    command += ["-W", "ignore", str(tmp_path)]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:]
    ran = {p.stem: json.loads(p.read_text()) for p in tmp_path.glob("*.json")}
    assert len(ran) == 8, ran
    hosts = _conftest().LANE_HOSTS
    assert all(r["host"] == hosts[r["lane"]] for r in ran.values()), ran
    for a, b in ((a, b) for a in ran for b in ran if a < b and _overlap(ran[a], ran[b])):
        assert ran[a]["lane"] != ran[b]["lane"], (a, b, ran)  # one lane, one test at a time
        assert "whole" not in (a, b), (a, b, ran)  # nothing beside the whole-machine test


def test_two_tests_hold_two_lanes_and_a_third_waits(tmp_path: Path, monkeypatch) -> None:
    lanes = _conftest()
    monkeypatch.setenv(lanes.LANE_DIR_ENV, str(tmp_path))
    first = lanes.machine_lanes(whole_machine=False)
    second = lanes.machine_lanes(whole_machine=False)
    assert {first.__enter__(), second.__enter__()} == {0, 1}
    got: list[int] = []
    third = threading.Thread(target=lambda: got.append(_hold(lanes, False)))
    third.start()
    third.join(1.0)
    assert third.is_alive() and not got  # both lanes held: it waits
    second.__exit__(None, None, None)
    third.join(10.0)
    assert got and got[0] in (0, 1)
    first.__exit__(None, None, None)


def test_a_whole_machine_test_waits_for_every_lane_and_holds_them(
    tmp_path: Path, monkeypatch
) -> None:
    lanes = _conftest()
    monkeypatch.setenv(lanes.LANE_DIR_ENV, str(tmp_path))
    running = lanes.machine_lanes(whole_machine=False)
    running.__enter__()
    whole = lanes.machine_lanes(whole_machine=True)
    entered = threading.Event()
    holder = threading.Thread(target=lambda: (whole.__enter__(), entered.set()))
    holder.start()
    assert not entered.wait(1.0)  # a lane is still held
    running.__exit__(None, None, None)
    assert entered.wait(10.0)
    holder.join()
    later: list[int] = []
    waiting = threading.Thread(target=lambda: later.append(_hold(lanes, False)))
    waiting.start()
    waiting.join(1.0)
    assert waiting.is_alive()  # no lane while the whole-machine test runs
    whole.__exit__(None, None, None)
    waiting.join(10.0)
    assert later == [0]


def _hold(lanes: ModuleType, whole_machine: bool) -> int:
    with lanes.machine_lanes(whole_machine) as lane:
        return lane
