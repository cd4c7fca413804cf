"""What the runner tells the pipeline driver (a child process) and the executor tasks."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

# The pipeline driver's exit codes when its query or its coordinator failed; it recorded
# why (history `driver_stop`). Mid-run the runner restarts it either way. COMMIT_REFUSED:
# the coordinator stopped loudly on a commit that can never succeed (torn or missing
# files, a write conflict, a duplicate key) and rolled its instant back, so no restart
# changes what that batch left: at the run's end the checks judge the table as it is.
# TABLE_SERVICE_FAILED: a compaction, clean or archival raised (history
# `compaction_failed` / `table_service_failed`): the driver stops rather than stream on
# with a table service dead, and the run that saw it is unknown (harness/runner/run.py).
# FENCED: a newer coordinator fenced this one out (a resumed zombie).
FAILED_EXIT = 3
FENCED_EXIT = 4
COMMIT_REFUSED_EXIT = 5
TABLE_SERVICE_FAILED_EXIT = 6


@dataclass
class DriverConfig:
    run_id: str
    run_dir: str
    table_path: str
    checkpoint_dir: str
    history_dir: str
    state_dir: str  # coordinator and writer WriteMeta state
    run_s: float  # warm-up + duration
    master: str
    sink: str  # engine | raw_parquet
    instant_mode: str  # async | blocking
    checkpoint_interval_s: float
    writers: int
    write_batch_rows: int
    op: str  # insert | upsert
    event_spec: dict[str, Any]
    rate: dict[str, Any]
    max_skew_ms: int
    commit_ack_timeout_s: float
    safety: dict[str, bool]
    secret: str
    rpc_host: str = "127.0.0.1"
    # Fault occurrences (harness.faults.schedule.Occurrence dicts) and the table's
    # constant storage latency, applied in the driver and in every executor.
    faults: list[dict[str, Any]] = field(default_factory=list)
    storage_latency_ms: float = 0.0
    shared_wait: bool = False  # engine.truetime.shared_wait
    compaction_every_s: float = 0.0  # mor tables: the compaction service (0 = off)
    archive_keep: int = 0  # table services (harness/pipeline/table_services.py; 0 = off)
    clean_retain_commits: int = 0
    # The table lock (harness/runner/lock_setup.py): {provider, endpoint, lease_s}.
    lock: dict[str, Any] = field(default_factory=dict)
    fired_dir: str = ""
    spark_conf: dict[str, str] = field(default_factory=dict)
    # Files the runner and driver use to talk: stop request and live status.
    stop_file: str = ""
    status_file: str = ""
    t0_file: str = ""  # the run's time origin (harness.run_clock)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(asdict(self), indent=2))

    @classmethod
    def load(cls, path: str | Path) -> DriverConfig:
        return cls(**json.loads(Path(path).read_text()))
