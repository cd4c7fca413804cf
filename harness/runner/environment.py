"""result.json `environment`: versions, machine, backend, Spark's UI and event log."""

from __future__ import annotations

import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.history import load_events
from harness.history_events import Kind
from harness.runner.rundir import RunPaths


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def _java_version() -> str | None:
    try:
        out = subprocess.run(["java", "-version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return None
    first = (out.stderr or out.stdout).splitlines()
    return first[0] if first else None


def _git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            cwd=os.path.dirname(__file__),
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def environment(backend: str) -> dict:
    return {
        "versions": {
            "instantbench": _version("instantbench"),
            "commit": _git_commit(),
            "python": platform.python_version(),
            "pyspark": _version("pyspark"),
            "pyarrow": _version("pyarrow"),
            "java": _java_version(),
        },
        "machine": {
            "hostname": platform.node(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "memory_gib": round(
                os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1
            ),
        },
        "backend": backend,
    }


def spark_ui(events: list[dict[str, Any]]) -> str | None:
    """The first pipeline driver's Spark UI (a restarted driver has its own, on the same or
    the next free port); None when the UI was off."""
    urls = [
        e["spark_ui"] for e in events if e.get("kind") == Kind.DRIVER_START and e.get("spark_ui")
    ]
    return urls[0] if urls else None


def live_spark_ui(history_dir: Path) -> str | None:
    """spark_ui() while the run goes on, from the readable lines of the history."""
    try:
        return spark_ui(load_events(history_dir)[0])
    except OSError:
        return None


def spark_tools(paths: RunPaths, events: list[dict[str, Any]]) -> dict[str, Any]:
    """`spark_ui`: the UI's URL (it lived only as long as the run); `spark_event_log`: the
    event log's directory in the run directory, for Spark's History Server (None if empty)."""
    kept = paths.spark_events.is_dir() and any(paths.spark_events.iterdir())
    return {
        "spark_ui": spark_ui(events),
        "spark_event_log": paths.spark_events.name if kept else None,
    }
