"""The run report links Spark's UI and event log, and says how to replay the log."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from reports import render_run


def _with_spark(root: Path, ui: str | None, logs: list[str]) -> Path:
    result = json.loads((root / "result.json").read_text())
    result["environment"]["spark_ui"] = ui
    result["environment"]["spark_event_log"] = "spark-events" if logs else None
    (root / "result.json").write_text(json.dumps(result))
    for name in logs:
        (root / "spark-events").mkdir(exist_ok=True)
        (root / "spark-events" / name).write_text('{"Event":"SparkListenerLogStart"}\n')
    return root


def test_report_links_the_ui_and_the_event_log_with_its_replay_command(
    make_run: Callable[..., Path],
) -> None:
    root = _with_spark(
        make_run("async"), "http://127.0.0.1:4040", ["local-1", "local-2.inprogress"]
    )
    html, md = (p.read_text() for p in render_run(root))
    spark = html[html.index('id="spark"') :]
    assert '<a href="http://127.0.0.1:4040">' in spark
    assert "only while the run lasted" in spark
    assert '<a href="spark-events/">' in spark and "2 application log(s)" in spark
    log_dir = (root / "spark-events").resolve().as_uri()
    assert f"spark.history.fs.logDirectory={log_dir}" in spark
    assert "sbin/start-history-server.sh" in spark
    assert "<http://127.0.0.1:4040>" in md and "start-history-server.sh" in md


def test_an_event_log_without_result_json_is_still_linked(make_run: Callable[..., Path]) -> None:
    # A run that died before its analysis is when the event log helps most.
    root = _with_spark(make_run("async"), None, ["local-1.inprogress"])
    (root / "result.json").unlink()
    html = render_run(root)[0].read_text()
    spark = html[html.index('id="spark"') :]
    assert "off during this run" in spark and '<a href="spark-events/">' in spark


def test_a_run_without_either_says_so(make_run: Callable[..., Path]) -> None:
    html = render_run(make_run("async"))[0].read_text()
    assert "No Spark UI and no event log" in html
