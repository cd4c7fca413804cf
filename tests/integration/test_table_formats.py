"""Delta Lake 4.4.0's and Apache Iceberg 1.11.0's own Spark writers through `instantbench
run` (scenarios/delta/, scenarios/iceberg/): each driver SIGKILLed between the format's
commit and Spark's, judged from evidence the format does not write about itself. CI's one
run per format (issue 34): Delta's append stream alone; Iceberg's bank stream beside two
OCC batch writers through its JDBC catalog (its hadoop-catalog stream alone runs in the
formats suite, scenarios/suites/formats.yaml)."""

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.scenario import Scenario, load_scenario
from harness.scenario.system import System
from harness.systems.registry import sink_system
from harness.systems.spark_stream.commit_watch import SeenCommit
from harness.systems.spark_stream.runtime_cache import SparkRuntime

pytestmark = pytest.mark.spark

JARS = {
    "delta": ["delta-spark_4.1_2.13-4.4.0.jar", "delta-storage-4.4.0.jar"],
    "iceberg": ["iceberg-spark-runtime-4.1_2.13-1.11.0.jar", "sqlite-jdbc-3.54.1.0.jar"],
}
SCENARIOS = {"delta": "delta/driver-crash", "iceberg": "iceberg/occ-bank"}
CHECKS = ("exactly_once", "unique_keys", "timeline", "isolation")


def _commits_by_batch(system: System, table: Path) -> dict[int, set[int]]:
    """Streaming batch id -> the committed versions of the table that record it (Iceberg:
    distinct snapshots, which later metadata versions keep current; Delta: versions)."""
    log = sink_system(system).log
    out: dict[int, set[int]] = {}
    for version, path in log.files(table):
        seen = log.read(path, version)
        if seen.batch is not None:
            out.setdefault(seen.batch, set()).add(seen.snapshot or seen.version)
    return out


def _scenario(kind: str) -> Scenario:
    return load_scenario(Path(__file__).parents[2] / "scenarios" / f"{SCENARIOS[kind]}.yaml")


# Delta's 25-s run must commit batches after its restarted driver: beside a second lane's
# run under load it committed none with rows (a rehearsal at c5abaf0), so it holds the
# machine until a format's run can wait for commits as the engine's does (min_commits).
@pytest.mark.parametrize(
    "kind", [pytest.param("delta", marks=pytest.mark.whole_machine), "iceberg"]
)
def test_a_format_s_driver_killed_between_its_commit_and_spark_s_stays_exactly_once(
    kind: str, run: Callable[..., object], request: pytest.FixtureRequest
) -> None:
    runtime: SparkRuntime = request.getfixturevalue(f"{kind}_runtime")
    outcome = run(SCENARIOS[kind])
    root = outcome.paths.root  # type: ignore[attr-defined]
    result = json.loads((root / "result.json").read_text())
    assert result["verdict"] == "valid", json.dumps(result, indent=1)[:4000]
    scenario = _scenario(kind)
    checks = (*CHECKS, "bank") if scenario.source.mode == "bank" else CHECKS
    assert {n: c["verdict"] for n, c in result["checks"].items()} == dict.fromkeys(checks, "valid")

    # The kill happened at the seam: the table's commit holds the batch, Spark's commit
    # log does not, before and after the process group died.
    (crash,) = result["faults"]
    evidence = crash["evidence"]
    assert crash["applied"] and evidence["exit_code"] == -9 and evidence["in_window"]
    assert evidence["table_batch"] not in evidence["committed_after"]
    assert result["metrics"]["driver_restarts"]["exit_codes"] == [-9, 0]

    # The restarted query replayed that batch and the format's sink skipped it: one
    # commit per batch, the killed batch among them, every committed batch there.
    log = sink_system(scenario.system).log
    batches = _commits_by_batch(scenario.system, root / "table")
    assert {b: c for b, c in batches.items() if len(c) > 1} == {}
    exactly_once = result["checks"]["exactly_once"]
    committed = exactly_once["checkpoint"]["committed_batches"]
    assert committed > evidence["table_batch"] and set(batches) == set(range(committed))
    assert exactly_once["expected_rows_certain"] == exactly_once["observed_rows"] > 0
    # Every committed version was seen (the first is the table's creation), and the table
    # as of each of the stream's was read through the format's time travel.
    versions = log.files(root / "table")
    assert result["checks"]["timeline"]["versions_seen"] == len(versions)
    assert versions[0][0] == log.first
    assert result["checks"]["isolation"]["commits"] == len(batches)
    # ... and each of them pulled through the format's incremental read from the one
    # before (the first from the table's creation, or from the opening balances).
    assert result["checks"]["isolation"]["pulls"] == len(batches)
    if scenario.source.mode == "bank":
        _judged_every_transfer(result, log.read, versions, len(batches))

    system = result["environment"]["system"]
    assert (system["kind"], system["spark_runtime"]["pyspark"]) == (kind, runtime.pyspark_version)
    assert [Path(j["path"]).name for j in system["jars"]] == JARS[kind]


def _judged_every_transfer(
    result: dict, read: Callable[[Path, int], SeenCommit], versions: list, stream: int
) -> None:
    """Each batch writer committed transfers beside the stream; each commit that was not
    the stream's nor the opening balances' is a transfer the writers saw commit (or one
    reported failed that the balances show applied), and the table as of every one of
    them was read for the bank."""
    transfers = result["checks"]["bank"]["transfers"]
    applied = transfers["committed"] + len(transfers["reported_failed_but_applied"])
    snapshots = {c.snapshot for c in (read(p, v) for v, p in versions) if c.snapshot}
    assert len(snapshots) == stream + 1 + applied  # the opening balances: one commit
    assert transfers["committed"] >= 2  # each of the two writers at least once
    by_kind = result["checks"]["bank"]["by_kind"]
    assert (by_kind["as_of"], by_kind["incremental"]) == (len(snapshots), stream)
