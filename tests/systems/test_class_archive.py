"""A Spark runtime's class-data archive (harness/systems/spark_stream/class_archive.py),
made by a stand-in for the runtime's python: kept only when its JVM exited cleanly and
the archive maps, made once, and never a failure."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from harness.systems.spark_stream import class_archive

REPORT = json.dumps({"class_path": "/jars/a.jar:/jars/b.jar", "exit": 0})


def _runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> Path:
    """A venv whose python is a shell script: $1 is the (stand-in) script, $2 the archive
    to write."""
    monkeypatch.setattr(class_archive, "SCRIPT", tmp_path / "class_archive_script.py")
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f"#!/bin/sh\n{body}\n")
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    return python


def test_an_archive_that_maps_is_kept_and_made_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = tmp_path / "runs"
    body = f"echo x >> {runs}; echo classes > \"$2\"; echo '{REPORT}'"
    python = _runtime(tmp_path, monkeypatch, body)
    checked: list[str] = []
    monkeypatch.setattr(class_archive, "maps", lambda a, cp: checked.append(cp) or True)
    archive = class_archive.ensure_class_archive(python)
    assert archive == tmp_path / "venv" / class_archive.ARCHIVE_NAME
    assert archive.read_text() == "classes\n" and checked == ["/jars/a.jar:/jars/b.jar"]
    assert class_archive.ensure_class_archive(python) == archive
    assert runs.read_text() == "x\n"  # the second call found it made
    assert [p.name for p in archive.parent.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.parametrize(
    "body, maps",
    [
        ('echo classes > "$2"; echo \'{"class_path": "/a", "exit": 1}\'', True),
        ('echo classes > "$2"; exit 3', True),
        (f"echo classes > \"$2\"; echo '{REPORT}'", False),  # it does not map
    ],
)
def test_no_archive_when_the_jvm_failed_or_it_does_not_map_and_no_second_try(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str, maps: bool
) -> None:
    runs = tmp_path / "runs"
    python = _runtime(tmp_path, monkeypatch, f"echo x >> {runs}; {body}")
    monkeypatch.setattr(class_archive, "maps", lambda a, cp: maps)
    assert class_archive.ensure_class_archive(python) is None
    venv = python.parent.parent
    assert sorted(p.name for p in venv.iterdir()) == ["bin", class_archive.FAILED_NAME]
    assert class_archive.ensure_class_archive(python) is None
    assert runs.read_text() == "x\n"  # the failure is remembered: no second JVM
