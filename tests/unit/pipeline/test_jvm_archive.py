"""The driver JVM's class-data archive: one process makes it, a broken one is never put
in place (a JVM that maps a truncated archive dies at start), off means off."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from harness.pipeline import jvm_archive
from harness.pipeline.jvm_archive import JvmArchive


@pytest.fixture(autouse=True)
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv(jvm_archive.OFF_ENV, raising=False)
    return tmp_path


def _archive() -> JvmArchive:
    archive = JvmArchive.for_session()
    assert archive is not None, "a java is installed here (Spark needs one)"
    return archive


def test_one_process_makes_the_archive_and_others_wait_for_it():
    maker, other = _archive(), _archive()
    assert "-XX:ArchiveClassesAtExit=" in maker.java_options(may_make=True)
    assert other.java_options(may_make=True) == ""  # claimed by a live process (this one)
    maker.making.write_bytes(b"half")
    maker.path.write_bytes(b"made")
    assert other.java_options(may_make=True).startswith(f"-XX:SharedArchiveFile={maker.path} ")


def test_a_process_that_keeps_its_session_never_makes_one():
    archive = _archive()
    assert archive.java_options(may_make=False) == ""
    assert not archive.claim.exists()


def test_a_dead_makers_claim_and_temporary_file_are_taken_over():
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    archive = _archive()
    archive.claim.parent.mkdir(parents=True)
    archive.claim.write_text(str(dead.pid))
    stale = archive.path.with_name(f"{archive.path.name}.{dead.pid}.tmp")
    stale.write_bytes(b"half written")
    assert "-XX:ArchiveClassesAtExit=" in archive.java_options(may_make=True)
    assert not stale.exists()
    assert archive.claim.read_text() == str(os.getpid())


def test_an_archive_no_jvm_can_map_is_not_put_in_place():
    archive = _archive()
    archive.java_options(may_make=True)
    archive.making.write_bytes(b"not a class-data archive")
    jvm = subprocess.Popen(
        [sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE
    )
    archive.finish(jvm, class_path=".")
    assert jvm.returncode == 0  # its stdin was closed, so it ended
    assert not archive.path.exists() and not archive.making.exists()
    assert not archive.claim.exists()  # the next driver tries again


def test_off_means_no_archive(monkeypatch):
    monkeypatch.setenv(jvm_archive.OFF_ENV, "off")
    assert JvmArchive.for_session() is None
