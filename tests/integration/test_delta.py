"""Delta Lake 4.4.0's own Spark writer through `instantbench run` (scenarios/delta/): its
driver SIGKILLed between Delta's commit and Spark's, judged from evidence Delta does not
write about itself. CI's one Delta run (issue 34: one per format)."""

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.systems.delta.log_watch import log_folder, read_version
from harness.systems.spark_stream.runtime_cache import SparkRuntime

pytestmark = pytest.mark.spark


def _versions_by_batch(table: Path) -> dict[int, list[int]]:
    """Streaming batch id -> the versions of the table whose txn action records it."""
    out: dict[int, list[int]] = {}
    for path in sorted(log_folder(table).glob("*.json")):
        seen = read_version(path)
        for batch in seen.txn.values():
            out.setdefault(batch, []).append(seen.version)
    return out


def test_delta_s_driver_killed_between_its_commit_and_spark_s_stays_exactly_once(
    run: Callable[..., object], delta_runtime: SparkRuntime
) -> None:
    outcome = run("delta/driver-crash")
    root = outcome.paths.root  # type: ignore[attr-defined]
    result = json.loads((root / "result.json").read_text())
    assert result["verdict"] == "valid", json.dumps(result, indent=1)[:4000]
    assert {n: c["verdict"] for n, c in result["checks"].items()} == dict.fromkeys(
        ("exactly_once", "unique_keys", "timeline"), "valid"
    )

    # The kill happened at the seam: Delta's version holds the batch, Spark's commit log
    # does not, before and after the process group died.
    (crash,) = result["faults"]
    evidence = crash["evidence"]
    assert crash["applied"] and evidence["exit_code"] == -9 and evidence["in_window"]
    assert evidence["delta_batch"] not in evidence["committed_after"]
    assert result["metrics"]["driver_restarts"]["exit_codes"] == [-9, 0]

    # The restarted query replayed that batch and Delta's SetTransaction skipped it: one
    # version per batch, and the killed batch among them.
    batches = _versions_by_batch(root / "table")
    assert {b: v for b, v in batches.items() if len(v) > 1} == {}
    assert evidence["delta_batch"] in batches
    exactly_once = result["checks"]["exactly_once"]
    committed = exactly_once["checkpoint"]["committed_batches"]
    assert committed > evidence["delta_batch"] and set(batches) == set(range(committed))
    assert exactly_once["expected_rows_certain"] == exactly_once["observed_rows"] > 0
    assert result["checks"]["timeline"]["versions_seen"] == len(batches)

    system = result["environment"]["system"]
    assert (system["kind"], system["version"]) == ("delta", "4.4.0")
    assert system["spark_runtime"]["pyspark"].startswith("4.1.")
    names = [Path(j["path"]).name for j in system["jars"]]
    assert names == ["delta-spark_4.1_2.13-4.4.0.jar", "delta-storage-4.4.0.jar"]
