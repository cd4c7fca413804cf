"""cluster.spark_conf: passed to the pipeline driver, refused where it would break the harness;
the driver's Spark UI and event log settings (issue 16, item 4). No Spark is started."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.pipeline import session
from harness.runner.driver_config import spark_conf
from harness.runner.rundir import new_run_dir
from harness.scenario import ScenarioError, validate_scenario
from harness.scenario.spark_conf import RESERVED

# Reserved keys the harness does not set through the session's config: the master is the
# builder's .master(), the checkpoint location an option of the query, the deploy mode
# Spark's default (client: the driver is the runner's child process).
NOT_VIA_CONFIG = {
    "spark.master",
    "spark.sql.streaming.checkpointLocation",
    "spark.submit.deployMode",
    "spark.eventLog.dir",  # driver_config.spark_conf
}


def _scenario(conf: dict[str, Any]):
    return validate_scenario({"name": "x", "cluster": {"spark_conf": conf}}, "s.yaml")


@pytest.mark.parametrize("key", sorted(RESERVED))
def test_a_setting_the_harness_owns_is_refused_naming_it(key: str) -> None:
    with pytest.raises(ScenarioError) as caught:
        _scenario({key: "x"})
    text = str(caught.value)
    assert text.startswith("s.yaml: cluster.spark_conf: ") and repr(key) in text
    assert RESERVED[key] in text and "\n" not in text


def test_validate_exits_2_naming_the_key(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\ncluster:\n  spark_conf: {spark.master: 'local[1]'}\n")
    result = CliRunner().invoke(app, ["validate", str(bad)])
    assert result.exit_code == 2
    flat = " ".join(result.output.split())  # the console may wrap
    assert "cluster.spark_conf" in flat and "'spark.master'" in flat


def test_other_settings_pass_as_spark_strings() -> None:
    conf = _scenario({"spark.sql.shuffle.partitions": 4, "spark.ui.enabled": False}).cluster
    assert conf.spark_conf == {"spark.sql.shuffle.partitions": "4", "spark.ui.enabled": "false"}
    with pytest.raises(ScenarioError, match="must be a string, number or boolean"):
        _scenario({"spark.jars": ["a.jar"]})


def test_the_driver_gets_the_ui_and_an_event_log_in_the_run_dir(tmp_path: Path) -> None:
    paths = new_run_dir(tmp_path, "x", None, None)
    assert paths.spark_events.is_dir()  # Spark refuses a missing event log directory
    conf = spark_conf(_scenario({"spark.executor.memory": "2g"}), paths, "10.77.0.3")
    assert conf["spark.ui.enabled"] == "true" and conf["spark.eventLog.enabled"] == "true"
    # The driver listens on its host's address (loopback, or the run's driver host).
    assert conf["spark.driver.host"] == conf["spark.driver.bindAddress"] == "10.77.0.3"
    assert conf["spark.eventLog.dir"] == paths.spark_events.resolve().as_uri()
    assert conf["spark.executor.memory"] == "2g"
    # The scenario's settings come last: it may turn the UI off.
    off = spark_conf(_scenario({"spark.ui.enabled": "false"}), paths, "127.0.0.1")
    assert off["spark.ui.enabled"] == "false"


class _Builder:
    def __init__(self) -> None:
        self.conf: dict[str, str] = {}

    def appName(self, name: str) -> _Builder:  # SparkSession.builder's API
        return self

    def master(self, url: str) -> _Builder:
        self.conf["spark.master"] = url
        return self

    def config(self, key: str, value: str) -> _Builder:
        self.conf[key] = value
        return self

    def getOrCreate(self) -> dict[str, str]:
        return self.conf


def test_reserved_keys_are_what_the_session_sets(monkeypatch: pytest.MonkeyPatch) -> None:
    builder = _Builder()
    monkeypatch.setattr(session.SparkSession, "builder", builder)
    conf = session.build_session("app", "local[2,4]", {"spark.executor.memory": "2g"})
    assert conf["spark.master"] == "local[2,4]" and conf["spark.executor.memory"] == "2g"
    stale = sorted(set(RESERVED) - NOT_VIA_CONFIG - set(conf))
    assert stale == [], "RESERVED names settings harness/pipeline/session.py no longer sets"
