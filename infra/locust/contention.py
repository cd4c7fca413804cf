"""Child process: `python -m infra.locust.contention SPEC.json OUT.json`.

Runs Locust as a library (Environment, LocalRunner, the step shape), headless and bounded
in time, against a fresh engine table, and writes per-stage statistics to OUT.json. A child
of its own because importing locust monkey-patches the whole process for gevent, which the
harness (threads, subprocesses, Spark) must not be.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

import gevent
from locust.env import Environment
from locust.runners import STATE_STOPPED

from engine.config import TableConfig
from engine.table import Table
from infra.locust.occ_writer import SCHEMA, TRANSITION, OccWriter, WriterSettings
from infra.locust.rendezvous import Rendezvous
from infra.locust.shape import Stage, StepShape, stage_label

PERCENTILES = {"p50": 0.5, "p95": 0.95, "p99": 0.99, "max": 1.0}
STOP_TIMEOUT_S = 30  # users finish the commit in hand, never die holding the table lock


def _attempts(env: Environment, name: str) -> dict[str, int]:
    commits = env.stats.entries.get((name, "commit"))
    attempts = commits.num_requests if commits else 0
    conflicts = commits.num_failures if commits else 0
    return {"attempts": attempts, "commits": attempts - conflicts, "conflicts": conflicts}


def _stage_stats(env: Environment, stage: Stage, lasted_s: float) -> dict[str, Any]:
    name = stage_label(stage.users)
    commits = env.stats.entries.get((name, "commit"))
    errors = env.stats.entries.get((name, "error"))
    counts = _attempts(env, name)
    attempts, conflicts, ok = counts["attempts"], counts["conflicts"], counts["commits"]
    return {
        "users": stage.users,
        "duration_s": lasted_s,
        **counts,
        "errors": errors.num_requests if errors else 0,
        "conflict_rate": conflicts / attempts if attempts else None,
        "commits_per_s": ok / lasted_s,
        "latency_ms": {
            k: commits.get_response_time_percentile(q) if commits and attempts else None
            for k, q in PERCENTILES.items()
        },
    }


def _lasted(shape: StepShape) -> list[float]:
    """Each stage's seconds: as it lasted, or (a run that timed out) its duration."""
    return [*shape.lasted, *(s.duration_s for s in shape.stages[len(shape.lasted) :])]


def run(spec: dict[str, Any]) -> dict[str, Any]:
    table_path = spec["table_path"]
    config = TableConfig(table_type=spec["table_type"], file_groups=spec["file_groups"])
    Table.create(table_path, config, SCHEMA).close()
    stages = tuple(Stage(int(s["users"]), float(s["duration_s"])) for s in spec["stages"])
    settings = WriterSettings(
        table_path,
        spec["rows_per_commit"],
        spec["keys"],
        spec["max_skew_ms"],
        spec["storage_latency_ms"],
        spec["seed"],
    )
    rendezvous = Rendezvous(int(spec.get("forced_rounds", 0)))
    user = type("BatchWriter", (OccWriter,), {"settings": settings, "rendezvous": rendezvous})
    ready = staticmethod(rendezvous.done)
    shape = type("Steps", (StepShape,), {"stages": stages, "ready": ready})()
    env = Environment(user_classes=[user], shape_class=shape, stop_timeout=STOP_TIMEOUT_S)
    runner = env.create_local_runner()
    deadline = time.monotonic() + float(spec["limit_s"]) + STOP_TIMEOUT_S + 10
    runner.start_shape()
    while runner.state != STATE_STOPPED and time.monotonic() < deadline:
        gevent.sleep(0.2)
    timed_out = runner.state != STATE_STOPPED
    runner.quit()
    table = Table.open(table_path, writer_id="contention-check")
    timeline = table.timeline.reload()
    completed = [i for i in timeline.completed() if i.action == "commit"]
    table.close()
    return {
        "stages": [_stage_stats(env, s, t) for s, t in zip(stages, _lasted(shape), strict=True)],
        # Attempts that ran across a stage change belong to neither stage's user count.
        "transition": _attempts(env, TRANSITION),
        "timed_out": timed_out,
        # The engine's own count, to cross-check Locust's: every success is one commit.
        "table_commits": len(completed),
        # Evidence: one conflict as the engine words it, and every other error.
        "sample_conflict": next(
            (str(e.error) for e in env.stats.errors.values() if e.method == "commit"), None
        ),
        "errors": [
            {"stage": e.name, "error": str(e.error), "count": e.occurrences}
            for e in env.stats.errors.values()
            if e.method == "error"
        ],
    }


def main() -> None:
    logging.basicConfig(level=logging.WARNING)
    spec_path, out_path = Path(sys.argv[1]), Path(sys.argv[2])
    out_path.write_text(json.dumps(run(json.loads(spec_path.read_text())), indent=2))


if __name__ == "__main__":
    main()
