"""result.json `environment`: versions, machine, backend, Spark's UI and event log."""

from __future__ import annotations

import importlib.util
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
    # A JVM names JAVA_TOOL_OPTIONS before its version when they are set.
    lines = [ln for ln in (out.stderr or out.stdout).splitlines() if not ln.startswith("Picked up")]
    return lines[0] if lines else None


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


def _scala_line() -> str | None:
    """The Scala line of the project's pyspark, from its spark-core jar's name."""
    spec = importlib.util.find_spec("pyspark")
    folder = Path(spec.origin).parent / "jars" if spec and spec.origin else None
    jars = sorted(folder.glob("spark-core_*.jar")) if folder and folder.is_dir() else []
    return jars[0].name.split("_", 1)[1].split("-", 1)[0] if jars else None


def engine_system() -> dict[str, Any]:
    """result.json `environment.system` for the engine: its Spark line (a comparison names
    each side's)."""
    return {
        "kind": "instantbench",
        "version": None,
        "spark_runtime": {"pyspark": _version("pyspark"), "scala": _scala_line()},
    }


def spark_line(result: dict[str, Any]) -> str | None:
    """`hudi 1.2.0 on pyspark 3.5.9 (Scala 2.12)`: the system and Spark line a run's
    result.json names (None for a result from before systems were recorded)."""
    system = result.get("environment", {}).get("system") or {}
    runtime = system.get("spark_runtime") or {}
    if not runtime.get("pyspark"):
        return None
    name = " ".join(str(p) for p in (system.get("kind"), system.get("version")) if p)
    return f"{name} on pyspark {runtime['pyspark']} (Scala {runtime.get('scala') or '?'})"


def environment(backend: str) -> dict:
    return {
        "system": engine_system(),
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
