"""A class-data archive for a Spark runtime of its own (Hudi's pyspark 3.5 venv), as the
engine's drivers have one for the project's Spark (harness/pipeline/jvm_archive.py): a
driver JVM that maps it starts a third faster, and Hudi's runs start several.

Made once per venv, when the runtime is (its first user waits for it, under the venv's
lock), by the runtime's own python (class_archive_script.py), checked to map with the
class path its JVM had, and left at <venv>/ARCHIVE_NAME, where the runtime-side scripts
find it beside their interpreter (harness/systems/hudi/spark_session.py). A speed-up
only: an archive that cannot be made or no longer maps (another java) costs the speed-up,
never a run (-Xshare:auto).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from pathlib import Path

from harness.pipeline.jvm_archive import maps
from infra.cache import exclusive

ARCHIVE_NAME = "spark-classes.jsa"  # the runtime side's name for it too
FAILED_NAME = "spark-classes.failed"
SCRIPT = Path(__file__).with_name("class_archive_script.py")
MAKE_TIMEOUT_S = 300.0


def ensure_class_archive(python: Path) -> Path | None:
    """The archive of the venv `python` belongs to, made if missing (None: not made). A
    venv where making it failed once says so (FAILED_NAME) and is not tried again: each
    try is a JVM's start-up and more, paid by every later user of the runtime."""
    venv = python.parent.parent
    archive, failed = venv / ARCHIVE_NAME, venv / FAILED_NAME
    if " " in str(archive):  # java options are split at spaces
        return None
    with exclusive(venv.parent / f".{venv.name}.archive.lock"):
        if not archive.exists() and not failed.exists():
            tmp = archive.with_name(f"{ARCHIVE_NAME}.{os.getpid()}.tmp")
            try:
                class_path = _make(python, tmp)
                if class_path is not None and maps(tmp, class_path):
                    os.replace(tmp, archive)
                else:
                    failed.touch()
            finally:
                with contextlib.suppress(FileNotFoundError):
                    tmp.unlink()
    return archive if archive.exists() else None


def _make(python: Path, tmp: Path) -> str | None:
    """Run the script; the class path its JVM had, if it exited cleanly after writing."""
    try:
        done = subprocess.run(
            [str(python), str(SCRIPT), str(tmp)],
            capture_output=True,
            text=True,
            timeout=MAKE_TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return None
    with contextlib.suppress(json.JSONDecodeError, KeyError, AttributeError):
        report = json.loads(lines[-1])
        return str(report["class_path"]) if report.get("exit") == 0 else None
    return None
