"""The final table read back through the format's own Spark reader (reader.py, a process
of its own): its snapshot, the table as of each commit asked for, and the format's
incremental read of what each pull's commits added."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq

from harness.systems.spark_stream.commit_watch import SeenCommit
from harness.systems.spark_stream.driver_process import run_group

if TYPE_CHECKING:
    from harness.systems.spark_stream.sink_run import SinkRun

READER = Path(__file__).with_name("reader.py")
READ_TIMEOUT_S = 600.0
Pull = tuple[SeenCommit, SeenCommit]  # (after, upto): what the commits after..upto added


@dataclass
class SinkReads:
    snapshot: pa.Table | None = None
    as_of: dict[int, pa.Table] = field(default_factory=dict)  # commit version -> its rows
    # (version after, version upto) -> the rows the format's incremental read returned
    incremental: dict[tuple[int, int], pa.Table] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # read label -> why it failed
    failure: str | None = None  # why there is no snapshot


def reader_name(run: SinkRun) -> str:
    return f"{run.system.label}'s Spark reader"


def _pull_label(after: SeenCommit, upto: SeenCommit) -> str:
    return f"incremental/{after.version}-{upto.version}"


def _specs(
    run: SinkRun, commits: Sequence[SeenCommit], pulls: Mapping[Pull, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    table = run.config["table_sql"]
    specs: dict[str, dict[str, Any]] = {"snapshot": {"sql": f"SELECT * FROM {table}"}}
    for c in commits:
        specs[f"as_of/{c.version}"] = {
            "sql": f"SELECT * FROM {table} VERSION AS OF {run.system.as_of(c)}"
        }
    for (after, upto), spec in pulls.items():
        specs[_pull_label(after, upto)] = spec
    return specs


def read_back(
    run: SinkRun, commits: Sequence[SeenCommit], pulls: Mapping[Pull, dict[str, Any]]
) -> SinkReads:
    """The snapshot, the table as of each commit, and each pull through its read spec (the
    format's incremental read)."""
    out = run.paths.root / "reads"
    specs = _specs(run, commits, pulls)
    config = {
        "jars": list(run.runtime.jars),
        "format": run.system.format,
        "session": run.config["session"],
        "out_dir": str(out),
        "reads": specs,
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
    reads = SinkReads(snapshot=pq.read_table(out / "snapshot"), errors=dict(failed))
    for commit in commits:
        if f"as_of/{commit.version}" not in failed:
            reads.as_of[commit.version] = pq.read_table(out / f"as_of/{commit.version}")
    for after, upto in pulls:
        label = _pull_label(after, upto)
        if label not in failed:
            reads.incremental[after.version, upto.version] = pq.read_table(out / label)
    return reads
