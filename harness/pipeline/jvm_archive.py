"""Class data sharing for Spark's JVMs started here (pipeline drivers, the Spark checks).

A JVM that maps an archive of the classes a Spark driver loads, instead of reading and
verifying them from Spark's jars, starts a third faster: session plus first jobs take 11
s instead of 17-20 s on this 2-core machine (docs/scenarios.md, How a run works). That is
paid once per driver, and a run restarts its driver after every coordinator crash.

The first driver (or Spark checks process) that finds no archive makes it: its JVM
writes the classes it loaded when it exits, to a temporary file that `stop_session`
moves into place once the JVM is gone (a JVM killed mid-way leaves no archive, and the
next driver tries again). Only one process makes it at a time (a claim file naming it);
a process that keeps its session (a test), and the JVMs of the table formats' scripts on
the project's pyspark (their drivers, batch writers and readers: `mapping_options`), only
map an archive that exists. The archive
is keyed by the java binary and Spark's jars, and a JVM maps it only if it fits
(`-Xshare:auto`: otherwise it starts as it would without), so a wrong or broken file
costs the speed-up, never a run. INSTANTBENCH_JVM_ARCHIVE=off turns it off; the archives
live in $XDG_CACHE_HOME/instantbench/jvm (~/.cache by default).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import psutil

from infra.cache import cache_root

OFF_ENV = "INSTANTBENCH_JVM_ARCHIVE"
JVM_EXIT_TIMEOUT_S = 120.0  # writing the archive takes a few seconds
# The JVM reports every class it cannot archive (signed jars, old class versions): noise.
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"


def _cache_dir() -> Path:
    return cache_root() / "jvm"


def _java() -> Path | None:
    home = os.environ.get("JAVA_HOME")
    found = Path(home) / "bin" / "java" if home else shutil.which("java")
    return Path(found).resolve() if found and Path(found).exists() else None


def archive_path() -> Path | None:
    """Where the archive of this java and this Spark is (None: no java found)."""
    import pyspark

    java = _java()
    if java is None:
        return None
    jars = Path(pyspark.__file__).parent / "jars"
    stat = java.stat()
    jar_names = sorted(p.name for p in jars.glob("*.jar"))
    key = "\n".join([str(java), str(stat.st_size), str(stat.st_mtime_ns), pyspark.__version__])
    key += "\n" + "\n".join(jar_names)
    return _cache_dir() / f"spark-{hashlib.sha1(key.encode()).hexdigest()[:16]}.jsa"


def mapping_options() -> str:
    """Java options that map the archive of this java and Spark if one was made, else none
    (a JVM of another process's making: it never makes one)."""
    archive = JvmArchive.for_session()
    return "" if archive is None else archive.java_options(may_make=False)


class JvmArchive:
    """The archive as one session uses it: mapped, or made by this session's JVM."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.claim = path.with_name(f"{path.name}.claim")
        self.making: Path | None = None  # the temporary file this session's JVM writes

    @classmethod
    def for_session(cls) -> JvmArchive | None:
        """None when turned off, without a java to key it by, or with a cache path that
        has a space."""
        if os.environ.get(OFF_ENV, "").lower() in ("off", "0", "false", "no"):
            return None
        path = archive_path()
        # Java options are split at spaces: a path with one cannot be passed.
        return None if path is None or " " in str(path) else cls(path)

    def java_options(self, may_make: bool) -> str:
        """The driver JVM's options: map the archive, or make it (`may_make`: a process
        whose session ends with `finish`, and no other process makes it), or nothing."""
        if self.path.exists():
            return f"-XX:SharedArchiveFile={self.path} -Xshare:auto {QUIET}"
        if may_make and self._claim():
            self.making = self.path.with_name(f"{self.path.name}.{os.getpid()}.tmp")
            return f"-XX:ArchiveClassesAtExit={self.making} {QUIET}"
        return ""

    def _claim(self) -> bool:
        """Become the one process that makes the archive (a claim of a dead one is taken)."""
        self.claim.parent.mkdir(parents=True, exist_ok=True)
        for _ in range(2):
            try:
                fd = os.open(self.claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                try:
                    holder = int(self.claim.read_text() or 0)
                except (OSError, ValueError):
                    holder = 0
                if holder and psutil.pid_exists(holder):
                    return False
                with contextlib.suppress(FileNotFoundError):
                    self.claim.unlink()  # its maker died: its temporary file is garbage
                for stale in self.claim.parent.glob(f"{self.path.name}.*.tmp"):
                    with contextlib.suppress(FileNotFoundError):
                        stale.unlink()
                continue
            with os.fdopen(fd, "w") as f:
                f.write(str(os.getpid()))
            return True
        return False

    def finish(self, jvm: subprocess.Popen | None, class_path: str | None) -> None:
        """After the session stopped: if its JVM makes the archive, let it exit (it writes
        the archive then), check that a JVM of `class_path` maps it, and move it into
        place (a JVM mapping a truncated archive dies at start)."""
        if self.making is None:
            return
        try:
            if jvm is not None and class_path is not None:
                with contextlib.suppress(OSError, ValueError):
                    if jvm.stdin is not None:
                        jvm.stdin.close()  # pyspark's JVM exits at the end of its stdin
                jvm.wait(timeout=JVM_EXIT_TIMEOUT_S)
                if jvm.returncode == 0 and maps(self.making, class_path):
                    os.replace(self.making, self.path)
        except (subprocess.TimeoutExpired, OSError):
            pass  # a speed-up only: a run never fails for it (the next driver tries again)
        finally:
            with contextlib.suppress(FileNotFoundError):
                self.making.unlink()
            with contextlib.suppress(FileNotFoundError):
                self.claim.unlink()


def maps(archive: Path, class_path: str) -> bool:
    """Does a JVM with `class_path` start with `archive` mapped (-Xshare:on fails if it
    cannot map it)?"""
    java = _java()
    if java is None or not archive.exists():
        return False
    command = [str(java), "-cp", class_path, f"-XX:SharedArchiveFile={archive}"]
    command += ["-Xshare:on", *QUIET.split(), "-version"]
    done = subprocess.run(command, capture_output=True, timeout=JVM_EXIT_TIMEOUT_S)
    return done.returncode == 0
