"""The run's verdict fails closed as a whole (harness/runner/analysis.py): a table whose
timeline cannot be read, or a scheduled fault that never took effect, makes the run
`unknown`, never `valid`, whatever the checks that could run said. A clean run of the same
table is `valid`, so each assertion below could fail."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from engine.config import TableConfig
from engine.table import Table
from harness.history import HistoryWriter
from harness.pipeline.events import SCHEMA
from harness.runner.analysis import analyse_run
from harness.runner.rundir import RunPaths
from harness.scenario import load_scenario

SMOKE = Path(__file__).resolve().parents[3] / "scenarios" / "smoke.yaml"


@pytest.fixture
def paths(tmp_path: Path) -> RunPaths:
    """A run directory whose table holds three committed instants (no history yet)."""
    paths = RunPaths(tmp_path / "run", tmp_path / "run" / "table")
    paths.history.mkdir(parents=True)
    table = Table.create(str(paths.table), TableConfig(file_groups=2), SCHEMA, max_skew_ms=0)
    for n in range(3):
        instant = table.start_instant()
        row = {"id": [n], "event_id": [n], "event_time": [0.0], "account": [0], "amount": [1]}
        rows = pa.table({**row, "payload": [b""]}, schema=SCHEMA)
        table.commit(instant, table.write_files(instant, rows, "insert"))
    table.close()
    return paths


def _analysed(paths: RunPaths, *overrides: str) -> dict:
    scenario = load_scenario(SMOKE, ["checks=[unique_keys, timeline]", *overrides])
    return analyse_run(scenario, paths, "run", None, None)


def test_an_unreadable_completed_instant_makes_the_run_unknown(paths: RunPaths) -> None:
    assert _analysed(paths, "faults=[]")["verdict"] == "valid"
    completed = sorted((paths.table / ".hoodie" / "timeline").glob("*.commit"))
    torn = completed[1]
    torn.write_bytes(torn.read_bytes()[: torn.stat().st_size // 2])
    result = _analysed(paths, "faults=[]")
    assert result["verdict"] == "unknown"
    assert result["error"].startswith("checking failed: CorruptInstantError"), result["error"]
    assert str(torn.name) in result["error"]


def test_a_fault_that_never_took_effect_makes_the_run_unknown(paths: RunPaths) -> None:
    drop = "faults=[{kind: drop_ack, at_s: 12}]"
    result = _analysed(paths, drop)
    assert result["verdict"] == "unknown"
    assert result["error"] == "faults never took effect: drop_ack@coordinator#0"
    assert result["faults"] == [
        {"kind": "drop_ack", "label": "drop_ack@coordinator#0", "applied": False, "evidence": {}}
    ]
    assert {c["verdict"] for c in result["checks"].values()} == {"valid"}  # they still ran
    HistoryWriter(paths.history, "driver").record(
        "fault",
        fault_kind="drop_ack",
        label="drop_ack@coordinator#0",
        target="coordinator",
        start_s=12.0,
        end_s=12.0,
        applied=True,
        evidence={"checkpoint_id": 5},
    )
    assert _analysed(paths, drop)["verdict"] == "valid"
