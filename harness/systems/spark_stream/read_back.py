"""The final table read back through the format's own Spark reader (reader.py, a process
of its own): its snapshot, and the table as of each of the stream's commits."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.parquet as pq

from harness.systems.spark_stream.commit_watch import SeenCommit
from harness.systems.spark_stream.driver_process import run_group

if TYPE_CHECKING:
    from harness.systems.spark_stream.sink_run import SinkRun

READER = Path(__file__).with_name("reader.py")
READ_TIMEOUT_S = 600.0


@dataclass
class SinkReads:
    snapshot: pa.Table | None = None
    as_of: dict[int, pa.Table] = field(default_factory=dict)  # commit version -> its rows
    errors: dict[int, str] = field(default_factory=dict)  # commit version -> why it failed
    failure: str | None = None  # why there is no snapshot


def reader_name(run: SinkRun) -> str:
    return f"{run.system.label}'s Spark reader"


def read_back(run: SinkRun, commits: Sequence[SeenCommit]) -> SinkReads:
    out = run.paths.root / "reads"
    config = {
        "jars": list(run.runtime.jars),
        "format": run.system.format,
        "session": run.config["session"],
        "table_sql": run.config["table_sql"],
        "out_dir": str(out),
        "as_of": {str(c.version): run.system.as_of(c) for c in commits},
    }
    config_path = run.paths.control / f"{run.system.kind}-reader.json"
    config_path.write_text(json.dumps(config))
    log = run.paths.logs / f"{run.system.kind}-reader.log"
    code = run_group([run.runtime.python, str(READER), str(config_path)], log, READ_TIMEOUT_S)
    failed_path = out / "failed.json"
    failed = json.loads(failed_path.read_text()) if failed_path.is_file() else {}
    if code != 0 or "snapshot" in failed or not (out / "snapshot").is_dir():
        why = failed.get("snapshot", f"exit {code}")
        return SinkReads(failure=f"{reader_name(run)} failed ({why}); see {log}")
    reads = SinkReads(snapshot=pq.read_table(out / "snapshot"))
    for commit in commits:
        label = f"as_of/{commit.version}"
        if label in failed:
            reads.errors[commit.version] = failed[label]
        else:
            reads.as_of[commit.version] = pq.read_table(out / label)
    return reads
