"""The zombie lock holder on Hudi (harness/systems/hudi/lock_pause.py) against a real
ZooKeeper: writers are child processes that hold Curator-style lock nodes with sessions of
their own, the table is a folder whose timeline files the test writes as Hudi would."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest

from harness.faults.schedule import Occurrence
from harness.history import HistoryWriter
from harness.scenario.faults import BatchWriterPause
from harness.systems.hudi.lock_holder import LockHolders, session_ports
from harness.systems.hudi.lock_pause import LockHolderPause
from tests.unit.engine.lock_helpers import zookeeper  # noqa: F401

# A writer: its own ZooKeeper session (1 s timeout) and Curator's lock node, held until
# its stdin closes.
HOLDER = """
import sys
from kazoo.client import KazooClient
zk = KazooClient(hosts=sys.argv[1], timeout=1.0)
zk.start()
zk.ensure_path(sys.argv[2])
zk.create(sys.argv[2] + "/_c_" + sys.argv[3] + "-lock-", b"application_id=Unknown",
          ephemeral=True, sequence=True)
print("held", flush=True)
sys.stdin.read()
zk.stop()
"""


@pytest.fixture
def lock_path(request: pytest.FixtureRequest) -> str:
    """A lock of the test's own: a killed writer's node outlives it by its session."""
    return f"/instantbench-hudi/{request.node.name}"


@pytest.fixture
def holders(
    zookeeper: str,  # noqa: F811
    lock_path: str,
) -> Iterator[Callable[[str], subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []

    def hold(name: str) -> subprocess.Popen[str]:
        child = subprocess.Popen(
            [sys.executable, "-c", HOLDER, zookeeper, lock_path, name],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        assert child.stdout is not None and child.stdout.readline().strip() == "held"
        started.append(child)
        return child

    yield hold
    for child in started:
        child.send_signal(18)  # SIGCONT, should a failed test leave one stopped
        child.kill()
        child.wait()


def _table(tmp_path: Path) -> Path:
    table = tmp_path / "table"
    (table / ".hoodie" / "timeline").mkdir(parents=True)
    (table / ".hoodie" / "metadata" / ".hoodie" / "timeline").mkdir(parents=True)
    return table


def _until(condition: Callable[[], bool], timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_the_lock_holder_is_named_by_its_session_s_port(
    zookeeper: str,  # noqa: F811
    holders: Callable[[str], subprocess.Popen[str]],
    lock_path: str,
) -> None:
    first, second = holders("a"), holders("b")
    reader = LockHolders(zookeeper, lock_path)
    try:
        holder = reader.holder({"batch_writer:1": second.pid, "batch_writer:0": first.pid})
        assert holder is not None and holder.owner == "batch_writer:0"
        assert holder.node.startswith("_c_a-lock-") and holder.port is not None
    finally:
        reader.close()


def test_cons_lines_give_each_session_its_client_port() -> None:
    cons = (
        " /127.0.0.1:34044[1](queued=0,recved=7,sent=7,sid=0x100016b7a750000,lop=CREA,to=1000)\n"
        " /127.0.0.1:34056[0](queued=0,recved=1,sent=0)\n"
    )
    assert session_ports(cons) == {0x100016B7A750000: 34044}


def test_a_writer_stopped_in_its_commit_past_its_lease_resumes_after_another_commits(
    zookeeper: str,  # noqa: F811
    holders: Callable[[str], subprocess.Popen[str]],
    lock_path: str,
    tmp_path: Path,
) -> None:
    table = _table(tmp_path)
    fault = BatchWriterPause(
        kind="batch_writer_pause",
        at_s=1,
        duration_s=2,
        target="batch_writer:0",
        point="commit_before_completed",
    )
    history = HistoryWriter(tmp_path / "history", "runner")
    zombie = holders("zombie")
    groups: dict[str, int] = {"batch_writer:0": zombie.pid}
    reader = LockHolders(zookeeper, lock_path)
    pause = LockHolderPause(
        Occurrence(fault, 0, 1.0, 3.0), reader, lambda: groups, history, 1.0, table
    )
    try:
        pause.step(0.5)  # before at_s: nothing
        pause.step(1.0)  # holding the lock, no metadata commit inflight yet: not the seam
        assert psutil.Process(zombie.pid).status() != psutil.STATUS_STOPPED
        (table / ".hoodie/metadata/.hoodie/timeline/20261129000000001.deltacommit.inflight").touch()
        pause.step(1.1)
        assert psutil.Process(zombie.pid).status() == psutil.STATUS_STOPPED

        _until(lambda: (pause.step(2.0), pause.state.expired_s is not None)[1])
        successor = holders("successor")  # the lock is free: it takes it
        groups["batch_writer:1"] = successor.pid
        _until(lambda: (pause.step(2.5), pause.state.successor is not None)[1])
        pause.step(10.0)  # past duration_s, nobody committed yet: it stays stopped
        assert pause.unsettled()
        (table / ".hoodie/timeline/20261129000000002_20261129000000003.commit").touch()
        assert successor.stdin is not None
        successor.stdin.close()  # it releases the lock
        _until(lambda: (pause.step(10.5), not pause.unsettled())[1])
    finally:
        pause.release()
        reader.close()

    assert psutil.Process(zombie.pid).status() != psutil.STATUS_STOPPED
    events = [json.loads(line) for p in history.dir.glob("*.jsonl") for line in p.open()]
    (recorded,) = [e for e in events if e["kind"] == "fault"]
    evidence = recorded["evidence"]
    assert recorded["applied"] and recorded["start_s"] == 1.1
    assert evidence["metadata_inflight"] == "20261129000000001.deltacommit.inflight"
    assert evidence["successor"] == "batch_writer:1"
    assert evidence["successor_commit"] == "20261129000000002_20261129000000003.commit"
    assert evidence["lock_node"].startswith("_c_zombie-lock-")


def test_a_pause_whose_lease_never_ran_out_is_not_recorded(
    zookeeper: str,  # noqa: F811
    holders: Callable[[str], subprocess.Popen[str]],
    lock_path: str,
    tmp_path: Path,
) -> None:
    """Stopped holding the lock, but nobody took it over within duration_s + the grace:
    resumed, and not applied."""
    table = _table(tmp_path)
    fault = BatchWriterPause(kind="batch_writer_pause", at_s=0, duration_s=1, point="lock_held")
    history = HistoryWriter(tmp_path / "history", "runner")
    zombie = holders("zombie")
    reader = LockHolders(zookeeper, lock_path)
    groups = {"batch_writer:0": zombie.pid}
    pause = LockHolderPause(
        Occurrence(fault, 0, 0.0, 1.0), reader, lambda: groups, history, 60.0, table
    )
    try:
        pause.step(0.0)
        assert psutil.Process(zombie.pid).status() == psutil.STATUS_STOPPED
        pause.step(100.0)  # past duration_s + TAKEOVER_GRACE_S
    finally:
        pause.release()
        reader.close()
    assert not pause.unsettled()
    assert psutil.Process(zombie.pid).status() != psutil.STATUS_STOPPED
    assert not [line for p in history.dir.glob("*.jsonl") for line in p.open() if '"fault"' in line]
