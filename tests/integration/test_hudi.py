"""Apache Hudi 1.2.0's own Spark writer through `instantbench run` (scenarios/hudi/): its
driver SIGKILLed between Hudi's commit and Spark's, and OCC batch writers beside the
stream under the bank check, judged from evidence Hudi does not write about itself. CI's
representatives of the Hudi suite (scenarios/suites/hudi.yaml)."""

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import pytest

from harness.systems.hudi.read_table import collect
from harness.systems.hudi.runtime import RuntimeUnavailable, ensure_runtime
from harness.systems.hudi.timeline_watch import instant_path, parse_instant, sink_batch

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def hudi_runtime(prerequisite: Callable[[bool, str], None]) -> None:
    try:
        ensure_runtime("1.2.0")
    except RuntimeUnavailable as exc:
        prerequisite(False, str(exc))


def _sink_batches(table: Path, identifier: str) -> dict[int, list[str]]:
    """Streaming batch id -> the completed instants of the table that record it."""
    out: dict[int, list[str]] = {}
    for path in sorted((table / ".hoodie" / "timeline").iterdir()):
        parsed = parse_instant(path.name)
        if parsed is None or parsed[0] != "completed":
            continue
        located = instant_path(table, path.name)
        batch = sink_batch(located, identifier) if located else None
        if batch is not None:
            out.setdefault(batch, []).append(path.name)
    return out


def _reads_agree(run_dir: Path) -> None:
    """Hudi's incremental reads add up to its snapshot, and each as-of read holds exactly
    the snapshot's rows committed at or before it."""
    reads = collect(run_dir / "reads", 0)
    assert reads.errors == {} and reads.snapshot is not None, reads.errors
    snapshot = reads.snapshot.to_pandas().set_index("event_id")["_hoodie_commit_time"]
    together = np.sort(
        np.concatenate([t.column("event_id").to_numpy() for t in reads.incremental.values()])
    )
    assert np.array_equal(together, np.sort(snapshot.index.to_numpy()))
    for requested, table in reads.as_of.items():
        want = np.sort(snapshot[snapshot <= requested].index.to_numpy())
        assert np.array_equal(np.sort(table.column("event_id").to_numpy()), want), requested


def test_a_driver_killed_between_hudi_s_commit_and_spark_s_stays_exactly_once(
    run: Callable[..., object], hudi_runtime: None
) -> None:
    outcome = run("hudi/driver-crash")
    root = outcome.paths.root  # type: ignore[attr-defined]
    result = json.loads((root / "result.json").read_text())
    assert result["verdict"] == "valid", json.dumps(result, indent=1)[:4000]

    # The kill happened at the seam: Hudi's instant complete, Spark's commit log without
    # the batch, before and after the process group died.
    (crash,) = [f for f in result["faults"] if f["kind"] == "coordinator_crash"]
    evidence = crash["evidence"]
    assert crash["applied"] and evidence["exit_code"] == -9 and evidence["in_window"]
    assert evidence["hudi_batch"] not in evidence["committed_after"]
    assert result["metrics"]["driver_restarts"]["exit_codes"][0] == -9

    # The replayed batch was skipped by Hudi's sink checkpoint: one instant per batch.
    table = root / "table"
    batches = _sink_batches(table, "instantbench-hudi-driver-crash")
    assert {b: names for b, names in batches.items() if len(names) > 1} == {}
    assert evidence["hudi_batch"] in batches

    exactly_once = result["checks"]["exactly_once"]
    assert exactly_once["ground_truth"] == "spark_checkpoint"
    assert exactly_once["checkpoint"]["committed_batches"] >= 2
    assert exactly_once["expected_rows_certain"] > 0
    assert set(batches) >= set(range(exactly_once["checkpoint"]["committed_batches"]))
    assert result["checks"]["timeline"]["completed"] >= 2
    _reads_agree(root)

    system = result["environment"]["system"]
    assert (system["kind"], system["version"]) == ("hudi", "1.2.0")
    assert system["spark_runtime"] == {"pyspark": "3.5.9", "scala": "2.12"}
    assert [Path(j["path"]).name for j in system["jars"]] == ["hudi-spark3.5-bundle_2.12-1.2.0.jar"]
    assert all(len(j["sha256"]) == 64 for j in system["jars"])


def test_occ_batch_writers_beside_the_stream_keep_every_read_s_total(
    run: Callable[..., object], hudi_runtime: None
) -> None:
    """Two MERGE INTO writers (Spark applications of their own) and the stream, under OCC
    and Hudi's ZooKeeper lock provider: every read of the final table keeps the total."""
    outcome = run("hudi/occ-bank")
    root = outcome.paths.root  # type: ignore[attr-defined]
    result = json.loads((root / "result.json").read_text())
    assert result["verdict"] == "valid", json.dumps(result, indent=1)[:4000]
    assert result["environment"]["lock"]["provider"] == "zookeeper"

    events = [
        json.loads(line)
        for path in (root / "history").glob("events-*.jsonl")
        for line in path.read_text().splitlines()
    ]
    committed = [e for e in events if e["kind"] == "txn" and e["outcome"] == "ok"]
    # The run goes on until each writer committed once (run_state.HudiRun.unsettled).
    assert {e["writer"] for e in committed} == {"batch_writer:0", "batch_writer:1"}

    bank = result["checks"]["bank"]
    assert bank["expected_total"] == 4000 and bank["bad_reads"]["count"] == 0
    # A read as of every completed commit: the opening, each transfer, each stream batch.
    batches = result["checks"]["exactly_once"]["checkpoint"]["committed_batches"]
    assert bank["by_kind"]["as_of"] >= 1 + len(committed) + batches
    assert bank["by_kind"]["incremental"] == bank["by_kind"]["as_of"]

    # Each committed transfer moved its amount exactly once, and a transfer reported
    # failed that committed anyway is named (transfers.py): the final balances are the
    # opening ones plus those, recomputed here from the history and Hudi's snapshot.
    transfers = bank["transfers"]
    assert transfers["committed"] == len(committed)
    want = dict.fromkeys(range(4), 1000)
    for txn in [*committed, *transfers["reported_failed_but_applied"]]:
        source, target = txn["accounts"]
        want[source] -= txn["amount"]
        want[target] += txn["amount"]
    snapshot = collect(root / "reads", 0).snapshot
    assert snapshot is not None
    accounts = snapshot.filter(pc.less(snapshot.column("id"), 0))
    balances = zip(accounts["account"].to_pylist(), accounts["amount"].to_pylist(), strict=True)
    assert dict(balances) == want
