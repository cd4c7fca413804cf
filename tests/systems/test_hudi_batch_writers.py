"""Hudi's batch writers from the project's side: their configs, the lock they share with
the stream, and their transactions in the history."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from engine.locks.registry import LockSpec
from harness.history import HistoryWriter, load_events
from harness.scenario import validate_scenario
from harness.systems.hudi.batch_writers import writer_configs
from harness.systems.hudi.lock_options import occ_options
from harness.systems.spark_stream.batch_writers import BatchWriters
from harness.systems.spark_stream.runtime_cache import SparkRuntime

STREAM = {
    "jars": ["/cache/hudi.jar"],
    "table_path": "/run/table",
    "table_name": "instantbench",
    "table_type": "cow",
    "mode": "bank",
    "record_key": "id",
    "file_groups": 2,
    "hudi_options": {"hoodie.write.concurrency.mode": "optimistic_concurrency_control"},
    "identifier": "the stream's own",
    "checkpoint_dir": "/run/checkpoint",
}


def _scenario(count: int, mode: str = "bank") -> object:
    return validate_scenario(
        {
            "name": "b",
            "seed": 5,
            "system": {"kind": "hudi"},
            "source": {"mode": mode, "accounts": 6},
            "batch_writers": {"count": count, "op": "transfer", "every_s": 0.5},
            "engine": {"lock": {"provider": "zookeeper"}},
        }
    )


def test_batch_writers_write_the_stream_s_table_and_the_first_opens_the_accounts(
    tmp_path: Path,
) -> None:
    configs = writer_configs(_scenario(2), STREAM, tmp_path)  # type: ignore[arg-type]
    assert [c["writer"] for c in configs] == ["batch_writer:0", "batch_writer:1"]
    assert [c["open_accounts"] for c in configs] == [True, False]
    for config in configs:
        assert config["hudi_options"] == STREAM["hudi_options"]  # the same OCC and lock
        assert config["table_path"] == "/run/table" and config["accounts"] == 6
        assert "identifier" not in config and "checkpoint_dir" not in config
        assert not config["open_only"]
    assert configs[0]["seed"] != configs[1]["seed"]
    assert configs[0]["stop_file"] != configs[1]["stop_file"]


def test_a_bank_stream_without_batch_writers_still_opens_its_accounts(tmp_path: Path) -> None:
    (opener,) = writer_configs(_scenario(0), STREAM, tmp_path)  # type: ignore[arg-type]
    assert opener["open_accounts"] and opener["open_only"]
    assert writer_configs(_scenario(0, "append"), STREAM, tmp_path) == []  # type: ignore[arg-type]


def test_every_writer_shares_hudi_s_own_lock_provider() -> None:
    zk = occ_options(LockSpec("zookeeper", "127.0.0.1:2999", 7), "t")
    assert zk["hoodie.write.concurrency.mode"] == "optimistic_concurrency_control"
    assert zk["hoodie.write.lock.provider"].endswith("ZookeeperBasedLockProvider")
    assert zk["hoodie.write.lock.zookeeper.url"] == "127.0.0.1:2999"  # port in the url
    assert zk["hoodie.write.lock.zookeeper.session_timeout_ms"] == "7000"
    assert zk["hoodie.cleaner.policy.failed.writes"] == "LAZY"
    fs = occ_options(LockSpec("file", None, 90), "t")
    assert fs["hoodie.write.lock.provider"].endswith("FileSystemBasedLockProvider")
    assert fs["hoodie.write.lock.filesystem.expire"] == "2"  # whole minutes, never 0
    with pytest.raises(ValueError, match="service"):
        occ_options(LockSpec("service", "/x", 10), "t")


FAKE_WRITER = """
import json, sys, time, os
cfg = json.load(open(sys.argv[1]))
print(json.dumps({"event": "opened"}), flush=True) if cfg["open_accounts"] else None
print(json.dumps({"event": "started"}), flush=True)
print(json.dumps({"event": "txn", "t": 1.5, "writer": cfg["writer"], "op": "transfer",
      "outcome": "ok", "attempts": 2, "accounts": [0, 1], "latency_ms": 9.0, "error": None}),
      flush=True)
while not os.path.exists(cfg["stop_file"]):
    time.sleep(0.02)
"""


def test_writers_run_until_stopped_and_their_transactions_reach_the_history(
    tmp_path: Path,
) -> None:
    """The process handling, with a stand-in script for batch_writer.py (no Spark here)."""
    script = tmp_path / "writer.py"
    script.write_text(FAKE_WRITER)
    runtime = SparkRuntime(sys.executable, "3.5.9", "2.12", (), ())
    configs = writer_configs(_scenario(2), STREAM, tmp_path)  # type: ignore[arg-type]
    writers = BatchWriters(runtime, configs, tmp_path, script, "Hudi")
    writers.launch()
    writers.ready()
    assert writers.exited() is None
    for process in writers.processes:  # force: both reported their transaction
        assert process.wait_for(("txn",), 30) is not None
    assert writers.each_committed()
    assert writers.stop(30) == [0, 0]
    writers.record(HistoryWriter(tmp_path / "history", "runner"))
    events, _ = load_events(tmp_path / "history")
    txns = [e for e in events if e["kind"] == "txn"]
    assert sorted(e["writer"] for e in txns) == ["batch_writer:0", "batch_writer:1"]
    assert all(e["outcome"] == "ok" and e["attempts"] == 2 and e["t"] == 1.5 for e in txns)
