"""OCC contention with Locust: batch writers committing through the engine, more of them
each stage; the conflict rate and commit latency per user count.

Locust runs in a child process (infra/locust/contention.py): importing it monkey-patches
the process for gevent, and the harness's threads and subprocesses must stay real.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from harness.scenario import Scenario

DEFAULT_USERS = (1, 2, 4, 8)
MARGIN_S = 90  # start-up, the last commits in hand, the final table read
# How long a stage may outlast its duration per forced round (every user meeting twice).
FORCED_ROUND_LIMIT_S = 120


class ContentionError(RuntimeError):
    """The Locust child failed or did not finish in time."""


@dataclass(frozen=True)
class ContentionSpec:
    stages: list[dict[str, float]]  # [{users, duration_s}]
    table_type: str = "cow"
    file_groups: int = 8
    rows_per_commit: int = 1000
    keys: int = 100000
    max_skew_ms: float = 200
    storage_latency_ms: float = 0
    seed: int = 42
    # Each stage's first rounds in which every user begins before any commits
    # (infra/locust/rendezvous.py): its conflicts forced, not left to its clock.
    forced_rounds: int = 0

    @classmethod
    def from_scenario(
        cls, scenario: Scenario, users: tuple[int, ...] = DEFAULT_USERS, stage_s: float = 10
    ) -> ContentionSpec:
        """The scenario's table, batch writers and TrueTime bound; one stage per user count."""
        return cls(
            stages=[{"users": u, "duration_s": stage_s} for u in users],
            table_type=scenario.table.type,
            file_groups=scenario.table.file_groups,
            rows_per_commit=scenario.batch_writers.rows_per_commit,
            keys=scenario.source.keys,
            max_skew_ms=scenario.engine.truetime.max_skew_ms,
            storage_latency_ms=scenario.table.storage.latency_ms,
            seed=scenario.seed,
        )

    @property
    def duration_s(self) -> float:
        return sum(s["duration_s"] for s in self.stages)

    @property
    def limit_s(self) -> float:
        """The longest the stages may run: their durations, and each forced round's limit."""
        return self.duration_s + self.forced_rounds * len(self.stages) * FORCED_ROUND_LIMIT_S


def measure_contention(spec: ContentionSpec, work_dir: Path | None = None) -> dict[str, Any]:
    """Run the stages against a fresh table; return {stages: [...], table_commits, ...}."""
    with tempfile.TemporaryDirectory(prefix="contention-", dir=work_dir) as tmp:
        spec_file, out_file = Path(tmp) / "spec.json", Path(tmp) / "out.json"
        table = str(Path(tmp) / "table")
        spec_file.write_text(
            json.dumps({**asdict(spec), "table_path": table, "limit_s": spec.limit_s})
        )
        command = [sys.executable, "-m", "infra.locust.contention", str(spec_file), str(out_file)]
        timeout = spec.limit_s + MARGIN_S
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise ContentionError(f"the Locust run did not finish within {timeout:.0f}s") from None
        if done.returncode != 0 or not out_file.exists():
            tail = "\n".join(done.stderr.splitlines()[-15:])
            raise ContentionError(f"the Locust run exited with {done.returncode}:\n{tail}")
        result = json.loads(out_file.read_text())
    result["spec"] = asdict(spec)
    return result
