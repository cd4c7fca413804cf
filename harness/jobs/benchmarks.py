"""The engine's pytest-benchmark micro-benchmarks, run in a child pytest for the nightly job."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from harness.jobs.suite import Benchmarks

# The stats of pytest-benchmark's JSON that go to the store (seconds per round, and ops/s).
STATS = ("min", "max", "mean", "stddev", "median", "iqr", "ops", "rounds")


@dataclass
class BenchmarkRun:
    json_path: Path
    error: str | None = None
    # {fullname: {stat: value}}
    results: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        # A failing benchmark is an error of the job (exit 2), not a check's violation.
        return "unknown" if self.error else "valid"


def _own_session_env() -> dict[str, str]:
    """The child pytest is a session of its own: launched from an xdist worker (the test
    suite's), it must not inherit the worker's identity, or pytest-benchmark disables
    itself and writes no JSON."""
    return {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST_")}


def run_benchmarks(spec: Benchmarks, out_dir: Path) -> BenchmarkRun:
    out_dir.mkdir(parents=True, exist_ok=True)
    run = BenchmarkRun(out_dir / "benchmarks.json")
    log = out_dir / "benchmarks.log"
    command = [
        sys.executable,
        "-m",
        "pytest",
        str(spec.path),
        "--benchmark-enable",
        f"--benchmark-json={run.json_path}",
        "-q",
        "-p",
        "no:cacheprovider",
        *spec.args,
    ]
    try:
        with log.open("w") as sink:
            done = subprocess.run(
                command,
                stdout=sink,
                stderr=subprocess.STDOUT,
                timeout=spec.timeout_s,
                env=_own_session_env(),
            )
    except subprocess.TimeoutExpired:
        run.error = f"the benchmarks did not finish within {spec.timeout_s:.0f}s; see {log}"
        return run
    if done.returncode != 0:
        run.error = f"pytest exited with {done.returncode}; see {log}"
    try:
        data = json.loads(run.json_path.read_text())
    except (OSError, ValueError) as exc:
        run.error = run.error or f"no benchmark JSON ({exc}); see {log}"
        return run
    for bench in data.get("benchmarks", []):
        stats = bench.get("stats", {})
        run.results[bench["fullname"]] = {
            s: float(stats[s]) for s in STATS if isinstance(stats.get(s), int | float)
        }
    return run
