"""The smoke scenario end to end on local Spark, verified by reading the table back."""

import json
import re

import pyarrow.compute as pc
import pytest

from engine.table import Table
from harness.history import read_events
from reports import render_run

pytestmark = pytest.mark.spark


def test_smoke_run_is_valid_and_every_committed_event_is_readable_once(run):
    # Until four stream commits: what the run wrote is counted in commits, not seconds (a
    # row count is a throughput, which a run beside this one moves).
    outcome = run("smoke", "duration_s=12", "min_commits=4")
    result = json.loads(outcome.paths.result.read_text())
    assert result["verdict"] == "valid", json.dumps(result["checks"], indent=1)[:3000]
    assert set(result["checks"]) == {
        "exactly_once",
        "timeline",
        "unique_keys",
        "isolation",
        "hudi_reader",
    }

    events = read_events(outcome.paths.history)
    batches = [e for e in events if e["kind"] == "batch"]
    expected = sum(b["rows"] for b in batches)
    assert expected > 0
    rows = Table.open(str(outcome.paths.table)).snapshot(columns=["event_id"])
    assert rows.num_rows == expected
    assert pc.count_distinct(rows.column("event_id")).as_py() == expected
    commits = [e for e in events if e["kind"] == "commit"]
    assert len(commits) >= max(4, len(batches) - 1)
    assert result["metrics"]["rows_committed"] == expected
    for name in ("scenario.yaml", "result.json"):
        assert (outcome.paths.root / name).exists()

    # Spark's own tools: the driver's UI on loopback, its event log kept in the run directory
    # (one log, complete: the driver stopped cleanly), and the report links both.
    env = result["environment"]
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", env["spark_ui"] or ""), env
    assert env["spark_event_log"] == "spark-events"
    logs = [p.name for p in outcome.paths.spark_events.iterdir()]
    assert len(logs) == 1 and not logs[0].endswith(".inprogress"), logs
    # Reports read files only: the per-second series the charts draw is in the run directory.
    assert (outcome.paths.history / "per_second.jsonl").stat().st_size > 0
    html = render_run(outcome.paths.root)[0].read_text()
    assert f'<a href="{env["spark_ui"]}">' in html and '<a href="spark-events/">' in html
    assert html.count("<svg") >= 5  # every chart drew from the run directory's files
