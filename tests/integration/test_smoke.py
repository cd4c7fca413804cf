"""The smoke scenario end to end on local Spark, verified by reading the table back."""

import json

import pyarrow.compute as pc
import pytest

from engine.table import Table
from harness.history import read_events

pytestmark = pytest.mark.spark


def test_smoke_run_is_valid_and_every_committed_event_is_readable_once(run):
    outcome = run("smoke", "duration_s=12")
    result = json.loads(outcome.paths.result.read_text())
    assert result["verdict"] == "valid", json.dumps(result["checks"], indent=1)[:3000]
    assert set(result["checks"]) == {"exactly_once", "timeline", "unique_keys", "isolation"}

    events = read_events(outcome.paths.history)
    batches = [e for e in events if e["kind"] == "batch"]
    expected = sum(b["rows"] for b in batches)
    assert expected > 100_000  # 10k rows/s for ~20 s
    rows = Table.open(str(outcome.paths.table)).snapshot(columns=["event_id"])
    assert rows.num_rows == expected
    assert pc.count_distinct(rows.column("event_id")).as_py() == expected
    commits = [e for e in events if e["kind"] == "commit"]
    assert len(commits) >= len(batches) - 1
    assert result["metrics"]["rows_committed"] == expected
    for name in ("scenario.yaml", "result.json"):
        assert (outcome.paths.root / name).exists()
