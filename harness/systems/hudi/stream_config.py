"""The config of Hudi's stream driver (stream_driver.py), and the exception its log ends with.

The driver runs as a process of its own (harness/systems/spark_stream/driver_process.py).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from harness.pipeline.events import SPARK_SCHEMA, EventSpec
from harness.systems.spark_stream.runtime_cache import SparkRuntime

DRIVER = Path(__file__).with_name("stream_driver.py")
TABLE_NAME = "instantbench"


# A micro-batch admits at most the files this many triggers land (one a second): a stream
# that starts late, or restarts after a kill, catches up in bounded batches, as Hudi users
# bound them (maxFilesPerTrigger), instead of one batch that swallows the whole backlog
# (a run whose first batch held every landed file judged a single batch).
CATCH_UP_TRIGGERS = 4


def stream_config(
    runtime: SparkRuntime,
    spec: EventSpec,
    work: Path,
    *,
    table_type: str = "mor",
    trigger_s: float = 2.0,
    master: str = "local[2,4]",
    identifier: str = "instantbench-hudi-0",
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The driver's config for a run laid out under `work` (landing/, table/, checkpoint/)."""
    return {
        "master": master,
        "jars": list(runtime.jars),
        "landing_dir": str(work / "landing"),
        "schema": SPARK_SCHEMA,
        "table_path": str(work / "table"),
        "table_name": TABLE_NAME,
        "table_type": table_type,
        "mode": spec.mode,
        "record_key": "id",
        "ordering_field": "event_id",
        "identifier": identifier,
        "file_groups": spec.file_groups,
        "checkpoint_dir": str(work / "checkpoint"),
        "trigger_s": trigger_s,
        "max_files_per_trigger": CATCH_UP_TRIGGERS * max(1, math.ceil(trigger_s)),
        "stop_file": str(work / "STOP"),
        **(extra or {}),
    }


HUDI_EXCEPTION = re.compile(r"(org\.apache\.hudi\.exception\.\w+: .*)")


def hudi_exception(log_path: Path, limit: int = 300) -> str | None:
    """The last of Hudi's exceptions in a process's log (its message, cut at `limit`)."""
    try:
        text = log_path.read_text(errors="replace")
    except OSError:
        return None
    found = HUDI_EXCEPTION.findall(text)
    return found[-1][:limit] if found else None
