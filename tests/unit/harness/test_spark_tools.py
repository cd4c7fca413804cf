"""result.json `environment.spark_ui` / `spark_event_log` and the URL the runner prints."""

from __future__ import annotations

import json
from pathlib import Path

from harness.history import HistoryWriter
from harness.runner.environment import live_spark_ui, spark_tools, spark_ui
from harness.runner.rundir import new_run_dir


def test_the_first_drivers_ui_and_a_non_empty_event_log(tmp_path: Path) -> None:
    paths = new_run_dir(tmp_path, "x", None, None)
    events = [
        {"t": 1.0, "kind": "driver_start", "pid": 1, "spark_ui": "http://127.0.0.1:4040"},
        {"t": 9.0, "kind": "driver_start", "pid": 2, "spark_ui": "http://127.0.0.1:4041"},
    ]
    assert spark_tools(paths, events) == {
        "spark_ui": "http://127.0.0.1:4040",
        "spark_event_log": None,  # the directory exists but Spark wrote nothing
    }
    (paths.spark_events / "local-1").write_text("{}\n")
    assert spark_tools(paths, events)["spark_event_log"] == "spark-events"


def test_ui_off_gives_none() -> None:
    assert spark_ui([{"t": 1.0, "kind": "driver_start", "pid": 1, "spark_ui": None}]) is None


def test_live_ui_from_a_history_being_written(tmp_path: Path) -> None:
    assert live_spark_ui(tmp_path / "missing") is None
    history = HistoryWriter(tmp_path, "driver")
    history.record("driver_start", pid=1, restored_batch=None, spark_ui="http://127.0.0.1:4040")
    assert live_spark_ui(tmp_path) == "http://127.0.0.1:4040"
    # A damaged line elsewhere in the history does not hide it.
    (tmp_path / "events-runner-1.jsonl").write_text("not json\n" + json.dumps({"t": 2}) + "\n")
    assert live_spark_ui(tmp_path) == "http://127.0.0.1:4040"
