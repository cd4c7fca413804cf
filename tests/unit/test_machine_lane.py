"""The tests that use the whole machine (Spark, clusters) share one xdist lane: however
many workers run, they run one after another on one of them (tests/conftest.py)."""

import shutil
import subprocess
import sys
from pathlib import Path

CONFTEST = Path(__file__).resolve().parents[1] / "conftest.py"
TESTS = """
import os, pytest

def _note(name):
    with open(os.path.join(os.path.dirname(__file__), name), "w") as f:
        f.write(os.environ["PYTEST_XDIST_WORKER"])

@pytest.mark.spark
@pytest.mark.parametrize("i", range(4))
def test_spark(i):
    _note(f"spark-{i}")

@pytest.mark.cluster
def test_cluster():
    _note("cluster")

@pytest.mark.parametrize("i", range(8))
def test_unit(i):
    _note(f"unit-{i}")
"""


def test_spark_and_cluster_tests_share_one_worker(tmp_path: Path) -> None:
    shutil.copy(CONFTEST, tmp_path / "conftest.py")
    (tmp_path / "test_lane.py").write_text(TESTS)
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "3"]
    command += ["--dist", "loadgroup", "-W", "ignore", str(tmp_path)]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:]
    workers = {
        p.name: p.read_text() for p in tmp_path.iterdir() if "-" in p.name or p.name == "cluster"
    }
    machine = {w for name, w in workers.items() if name.startswith(("spark", "cluster"))}
    assert len(machine) == 1, workers
    assert len([n for n in workers if n.startswith("unit")]) == 8  # the others ran too
