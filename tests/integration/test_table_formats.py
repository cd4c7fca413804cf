"""Delta Lake 4.4.0's and Apache Iceberg 1.11.0's own Spark writers through `instantbench
run` (scenarios/delta/, scenarios/iceberg/): each driver SIGKILLed between the format's
commit and Spark's, judged from evidence the format does not write about itself. CI's one
run per format (issue 34)."""

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.systems.registry import sink_system
from harness.systems.spark_stream.runtime_cache import SparkRuntime

pytestmark = pytest.mark.spark

JARS = {
    "delta": ["delta-spark_4.1_2.13-4.4.0.jar", "delta-storage-4.4.0.jar"],
    "iceberg": ["iceberg-spark-runtime-4.1_2.13-1.11.0.jar"],
}


def _commits_by_batch(kind: str, table: Path) -> dict[int, set[int]]:
    """Streaming batch id -> the commits of the table that record it (Iceberg: distinct
    snapshots, which later metadata versions keep current; Delta: versions)."""
    log = sink_system(kind).log
    out: dict[int, set[int]] = {}
    for path in sorted((table / log.folder).iterdir()):
        match = log.name.match(path.name)
        if match is None:
            continue
        seen = log.read(path, int(match.group(1)))
        if seen.batch is not None:
            out.setdefault(seen.batch, set()).add(seen.snapshot or seen.version)
    return out


@pytest.mark.parametrize("kind", ["delta", "iceberg"])
def test_a_format_s_driver_killed_between_its_commit_and_spark_s_stays_exactly_once(
    kind: str, run: Callable[..., object], request: pytest.FixtureRequest
) -> None:
    runtime: SparkRuntime = request.getfixturevalue(f"{kind}_runtime")
    outcome = run(f"{kind}/driver-crash")
    root = outcome.paths.root  # type: ignore[attr-defined]
    result = json.loads((root / "result.json").read_text())
    assert result["verdict"] == "valid", json.dumps(result, indent=1)[:4000]
    assert {n: c["verdict"] for n, c in result["checks"].items()} == dict.fromkeys(
        ("exactly_once", "unique_keys", "timeline", "isolation"), "valid"
    )

    # The kill happened at the seam: the table's commit holds the batch, Spark's commit
    # log does not, before and after the process group died.
    (crash,) = result["faults"]
    evidence = crash["evidence"]
    assert crash["applied"] and evidence["exit_code"] == -9 and evidence["in_window"]
    assert evidence["table_batch"] not in evidence["committed_after"]
    assert result["metrics"]["driver_restarts"]["exit_codes"] == [-9, 0]

    # The restarted query replayed that batch and the format's sink skipped it: one
    # commit per batch, the killed batch among them, every committed batch there.
    batches = _commits_by_batch(kind, root / "table")
    assert {b: c for b, c in batches.items() if len(c) > 1} == {}
    exactly_once = result["checks"]["exactly_once"]
    committed = exactly_once["checkpoint"]["committed_batches"]
    assert committed > evidence["table_batch"] and set(batches) == set(range(committed))
    assert exactly_once["expected_rows_certain"] == exactly_once["observed_rows"] > 0
    # The first version is the table's creation; every later one is a batch's, and the
    # table as of each of them was read through the format's time travel.
    assert result["checks"]["timeline"]["versions_seen"] == len(batches) + 1
    assert result["checks"]["isolation"]["commits"] == len(batches)

    system = result["environment"]["system"]
    assert (system["kind"], system["spark_runtime"]["pyspark"]) == (kind, runtime.pyspark_version)
    assert [Path(j["path"]).name for j in system["jars"]] == JARS[kind]
