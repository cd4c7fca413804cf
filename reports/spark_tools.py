"""Spark's own tools for a run: its UI (it lived only while the run lasted) and the event
log kept in the run directory, with the command that replays it in Spark's History Server."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path

from reports.rundata import RunData

EVENT_LOG_DIR = "spark-events"  # result.json environment.spark_event_log names it too
HISTORY_SERVER_URL = "http://127.0.0.1:18080"
# pip's pyspark ships Spark's sbin/ scripts; a full Spark install sets SPARK_HOME itself.
_PIP_SPARK_HOME = "$(python -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')"


@dataclass(frozen=True)
class SparkTools:
    ui: str | None  # the driver's UI URL during the run
    event_log: Path | None  # the directory with one log per driver start
    logs: list[str]  # its files (`.inprogress`: a driver that did not stop cleanly)

    @property
    def event_log_href(self) -> str:
        """A link from report.html, which sits in the run directory."""
        return f"{self.event_log.name}/" if self.event_log else ""

    @property
    def replay(self) -> str | None:
        """Shell lines that start Spark's History Server on this run's event log (loopback)."""
        if self.event_log is None:
            return None
        options = f"-Dspark.history.fs.logDirectory={self.event_log.resolve().as_uri()}"
        return "\n".join(
            (
                f'export SPARK_HOME="${{SPARK_HOME:-{_PIP_SPARK_HOME}}}"',
                f"SPARK_LOCAL_IP=127.0.0.1 SPARK_HISTORY_OPTS={shlex.quote(options)} \\",
                '  "$SPARK_HOME/sbin/start-history-server.sh"',
                f"# then open {HISTORY_SERVER_URL}; stop: $SPARK_HOME/sbin/stop-history-server.sh",
            )
        )


def spark_tools(run: RunData) -> SparkTools | None:
    """From result.json's environment and the run directory; None if neither has either."""
    env = run.result.get("environment")
    env = env if isinstance(env, dict) else {}
    ui = env.get("spark_ui") if isinstance(env.get("spark_ui"), str) else None
    # The directory is read even without result.json: a run that died is when it helps most.
    folder = run.root / str(env.get("spark_event_log") or EVENT_LOG_DIR)
    logs = sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []
    if ui is None and not logs:
        return None
    return SparkTools(ui, folder if logs else None, logs)
