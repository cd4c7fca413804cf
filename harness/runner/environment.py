"""result.json `environment`: versions, machine, backend."""

from __future__ import annotations

import os
import platform
import subprocess
from importlib import metadata


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
