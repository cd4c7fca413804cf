"""Apache Hudi 1.2.0's own Spark streaming sink, killed between its commit and Spark's.

The driver (pyspark 3.5 + the Hudi bundle, a process group of its own) streams landed
append-mode events into a MOR table. The timeline watch fires a SIGKILL as soon as a
deltacommit completes while Spark's commit log does not yet hold the batch (the shape of
apache/hudi#6098), then the driver restarts on the same checkpoint, runs on and stops
cleanly. Hudi's own reader must then return every event of every batch Spark committed
exactly once, and the timeline's times must only have moved forward.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from harness.pipeline.events import EventSpec
from harness.pipeline.rates import rate_law
from harness.systems.hudi.checkpoint_truth import (
    CheckpointTruth,
    committed_event_ids,
    read_truth,
)
from harness.systems.hudi.driver_process import DriverProcess, stream_config
from harness.systems.hudi.landing import Lander
from harness.systems.hudi.read_table import HudiReads, completed_instants, read_table
from harness.systems.hudi.runtime import RuntimeUnavailable, SparkRuntime, ensure_runtime
from harness.systems.hudi.seams import KillBetweenCommits, KillEvidence
from harness.systems.hudi.timeline_watch import (
    SeenInstant,
    TimelineWatch,
    instant_path,
    judge,
    sink_batch,
)

pytestmark = pytest.mark.spark

RATE = 2_000  # rows/s
TRIGGER_S = 2.0
WINDOW_FOR_S = 25.0  # the first run: after this, kill at the next completion, window or not
AFTER_RESTART_S = 10.0
START_TIMEOUT_S = 120.0


@pytest.fixture(scope="module")
def hudi_runtime(prerequisite: Callable[[bool, str], None]) -> SparkRuntime:
    try:
        return ensure_runtime("1.2.0")
    except RuntimeUnavailable as exc:
        prerequisite(False, str(exc))
        raise


def _tail(driver: DriverProcess) -> str:
    return "\n".join(driver.log_path.read_text().splitlines()[-15:])


def _start(driver: DriverProcess) -> dict[str, Any]:
    line = driver.wait_for(("started", "failed"), START_TIMEOUT_S)
    assert line is not None and line["event"] == "started", _tail(driver)
    return line


def _sink_batches(table: Path, entries: list[SeenInstant], identifier: str) -> dict[int, list[str]]:
    """Streaming batch id -> requested times of the completed deltacommits recording it."""
    batches: dict[int, list[str]] = {}
    for entry in entries:
        path = instant_path(table, entry.name)
        if entry.state == "completed" and entry.action == "deltacommit" and path is not None:
            batch = sink_batch(path, identifier)
            if batch is not None:
                batches.setdefault(batch, []).append(entry.requested)
    return batches


def _check_reads(reads: HudiReads, truth: CheckpointTruth, instant_of: dict[int, str]) -> None:
    """Each committed batch's rows carry the commit time of the one instant that recorded
    it; each incremental read holds exactly its instant's rows; each as-of read holds the
    rows of the instants requested up to it."""
    assert reads.snapshot is not None
    snapshot = reads.snapshot.to_pandas().set_index("event_id")["_hoodie_commit_time"]
    for batch in truth.committed_batches:
        ids = committed_event_ids(truth, batch)
        assert set(snapshot.loc[ids].unique()) == {instant_of[batch]}, batch
    increments = [t.to_pandas() for t in reads.incremental.values()]
    for (begin, end), frame in zip(reads.incremental, increments, strict=True):
        assert frame["_hoodie_commit_time"].nunique() <= 1, (begin, end)
    together = pd.concat(increments)["event_id"].sort_values().to_numpy()
    assert np.array_equal(together, np.sort(snapshot.index.to_numpy()))
    for requested, table in reads.as_of.items():
        want = np.sort(snapshot[snapshot <= requested].index.to_numpy())
        assert np.array_equal(np.sort(table.column("event_id").to_numpy()), want), requested


@dataclass
class KilledRun:
    """What the two drivers did: the kill's evidence, the watched timeline, their lines."""

    evidence: KillEvidence
    entries: list[SeenInstant]
    drivers: list[DriverProcess]
    landed: int
    seconds: dict[str, float] = field(default_factory=dict)


def _run_kill_restart(
    runtime: SparkRuntime, spec: EventSpec, cfg: dict[str, Any], work: Path
) -> KilledRun:
    """Driver 1 until the seam kills it, driver 2 on the same checkpoint, a clean stop."""
    t0 = time.monotonic()
    table, checkpoint = Path(cfg["table_path"]), Path(cfg["checkpoint_dir"])
    law = rate_law({"shape": "constant", "rows_per_s": RATE}, 300)
    lander = Lander(spec, law, work / "landing")
    drivers = [DriverProcess(runtime, cfg, work, "driver-1")]
    seam = KillBetweenCommits(
        drivers[0].signal_kill, checkpoint, table, cfg["identifier"], window_for_s=WINDOW_FOR_S
    )
    watch = TimelineWatch(table, interval_s=0.005, on_new=seam)
    try:
        _start(drivers[0])
        lander.start()
        seam.arm()
        watch.start()
        fired = seam.wait(WINDOW_FOR_S + 90)
        assert fired is not None, "no deltacommit completed\n" + _tail(drivers[0])
        drivers[0].kill()  # reap the killed group before reading what it left
        evidence = seam.settle()
        assert evidence is not None
        t_killed = time.monotonic()
        drivers.append(DriverProcess(runtime, cfg, work, "driver-2"))
        _start(drivers[1])
        time.sleep(AFTER_RESTART_S)
        lander.stop()  # the driver drains what landed, then stops between batches
        assert drivers[1].stop() == 0, _tail(drivers[1])
        assert drivers[1].events("stopped")[0]["drained"], _tail(drivers[1])
    finally:
        lander.stop()
        entries = watch.stop()
        for driver in drivers:
            if driver.process.poll() is None:
                driver.kill()
    seconds = {"to_kill": t_killed - t0, "to_stop": time.monotonic() - t0}
    return KilledRun(evidence, entries, drivers, lander.offsets_landed(), seconds)


def _report(
    run: KilledRun, truth: CheckpointTruth, reads: HudiReads, sinks: dict[int, list[str]]
) -> dict[str, Any]:
    """The evidence a reader of the test's output (or evidence.json) judges the run by."""
    restarted_log = run.drivers[1].log_path.read_text()
    return {
        "kill": run.evidence.to_dict(),
        "startup_s": [d.events("started")[0]["startup_s"] for d in run.drivers],
        "batches": [
            {k: b[k] for k in ("batch_id", "rows", "wall_ms", "add_batch_ms")}
            for d in run.drivers
            for b in d.events("batch")
        ],
        "committed_batches": truth.committed_batches,
        "landed_offsets": run.landed,
        "timeline": [e.name for e in run.entries],
        "sink_batches": sinks,
        "skipped_by_sink": [
            line[line.index("Skipping") :]
            for line in restarted_log.splitlines()
            if "Skipping already completed batch" in line
        ],
        "read_s": reads.seconds,
        "read_rows": {
            "snapshot": reads.snapshot.num_rows if reads.snapshot is not None else None,
            **{f"as_of/{k}": t.num_rows for k, t in reads.as_of.items()},
            **{f"incremental/{b}_{e}": t.num_rows for (b, e), t in reads.incremental.items()},
        },
        "seconds": {k: round(v, 1) for k, v in run.seconds.items()},
    }


def test_a_kill_between_hudi_s_commit_and_spark_s_loses_and_duplicates_nothing(
    tmp_path: Path, hudi_runtime: SparkRuntime
) -> None:
    spec = EventSpec(mode="append", seed=17, partitions=2, payload_bytes=100, file_groups=4)
    cfg = stream_config(hudi_runtime, spec, tmp_path, table_type="mor", trigger_s=TRIGGER_S)
    table = Path(cfg["table_path"])
    run = _run_kill_restart(hudi_runtime, spec, cfg, tmp_path)
    t_read = time.monotonic()
    truth = read_truth(cfg["checkpoint_dir"])
    instants = completed_instants(run.entries, actions=("deltacommit",))
    reads = read_table(hudi_runtime, table, tmp_path / "reads", instants)
    run.seconds["read"] = time.monotonic() - t_read
    sinks = _sink_batches(table, run.entries, cfg["identifier"])
    report = _report(run, truth, reads, sinks)
    (tmp_path / "evidence.json").write_text(json.dumps(report, indent=1, default=str))
    print(json.dumps(report, default=str))

    assert truth.problems == []
    assert reads.errors == {} and reads.snapshot is not None
    evidence = run.evidence
    assert evidence.in_window or evidence.fallback, evidence.to_dict()
    if evidence.in_window:  # else the window never showed: recorded, and the rest still holds
        # The batch Hudi had committed when the kill came was replayed after the restart
        # and Spark committed it then ...
        assert evidence.hudi_batch in truth.committed_batches
    # ... and Hudi recorded each batch of this sink in one deltacommit only: the replay of a
    # batch it had committed was skipped, not written again.
    assert {b: r for b, r in sinks.items() if len(r) > 1} == {}
    assert set(truth.committed_batches) <= set(sinks)
    expected = committed_event_ids(truth)
    got = reads.snapshot.column("event_id").to_numpy()
    keys = reads.snapshot.column("id").to_numpy()
    assert expected.size > 0
    assert np.unique(got).size == got.size, "duplicate rows in the snapshot"
    assert np.unique(keys).size == keys.size, "duplicate keys in the snapshot"
    missing = np.setdiff1d(expected, got)
    assert missing.size == 0, f"{missing.size} committed events missing, e.g. {missing[:10]}"
    assert got.max() < run.landed  # nothing that was never landed
    assert judge(run.entries) == []
    _check_reads(reads, truth, {b: r[0] for b, r in sinks.items()})
