"""The cache every system's Spark runtime is made in: venvs of other pyspark versions and
the jars its writer needs, fetched with the machine's Maven client.

Made the first time a run needs them and cached outside the repository, under
$XDG_CACHE_HOME/instantbench/ (default ~/.cache/instantbench/):
    runtimes/pyspark-<version>/   a venv (python -m venv, then pip install)
    jars/<artifact>-<version>.jar fetched with the machine's own `mvn dependency:copy`
Several processes (pytest-xdist workers, parallel runs) may ask at once: each item is made
under an exclusive fcntl lock, and counts as present only once complete (the venv's marker
file is written last; a jar is fetched into a temporary folder and renamed into place).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from importlib.metadata import version as installed_version
from pathlib import Path
from typing import Any

from infra.cache import cache_root, exclusive

MARKER = ".instantbench-complete"  # written last: a venv without it is half-made
PIP_TIMEOUT_S = 1800  # a cold pip cache builds pyspark's ~300 MB sdist
MVN_TIMEOUT_S = 1800


class RuntimeUnavailable(Exception):
    """A runtime cannot be had; the message is one line naming exactly what is missing."""


@dataclass(frozen=True)
class SparkRuntime:
    python: str  # the venv's python: runs stream_driver.py, reader.py and the executors
    pyspark_version: str
    scala: str
    jars: tuple[str, ...]
    jar_sha256: tuple[str, ...]  # one per jar, same order: what result.json records

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def spark_home(self) -> Path:
        """The runtime's pyspark package (bin/spark-class: its standalone daemons)."""
        venv = Path(self.python).parent.parent
        found = sorted(venv.glob("lib/python*/site-packages/pyspark"))
        return found[0] if found else venv / "pyspark"


def _run(cmd: list[str], timeout_s: float, cwd: Path | None = None) -> tuple[int, str]:
    """Exit code and combined output; a missing program or a timeout is exit code -1."""
    try:
        done = subprocess.run(
            cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout_s, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return -1, f"{type(exc).__name__}: {exc}"
    return done.returncode, (done.stdout or "") + (done.stderr or "")


def last_line(output: str) -> str:
    """The line of a tool's output that says what went wrong, without ANSI colours or URLs."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", output)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in lines:  # Maven's own summary; the lines after it are generic hints
        if "Failed to execute goal" in line:
            line = line.split(": ", 1)[1] if ": " in line else line
            return re.sub(r"\s*\(https?://[^)]*\)", "", line)
    useful = [line for line in lines if line not in ("[ERROR]",) and "[Help" not in line]
    return re.sub(r"\s*\(?https?://\S+", "", useful[-1]) if useful else "no output"


def ensure_venv(pyspark: str, who: str, root: Path | None = None) -> Path:
    """The python of a venv with pyspark==`pyspark`, made once."""
    runtimes = (root or cache_root()) / "runtimes"
    venv = runtimes / f"pyspark-{pyspark}"
    python = venv / "bin" / "python"
    wanted = [f"pyspark=={pyspark}"]
    marker = venv / MARKER
    with exclusive(runtimes / f".pyspark-{pyspark}.lock"):
        if marker.exists() and json.loads(marker.read_text()).get("requirements") == wanted:
            return python
        shutil.rmtree(venv, ignore_errors=True)  # half-made, or made for other requirements
        code, out = _run([sys.executable, "-m", "venv", str(venv)], 300)
        if code != 0:
            raise RuntimeUnavailable(
                f"{who} needs a python venv, which `{sys.executable} -m venv` could not make: "
                f"{last_line(out)}"
            )
        pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        code, out = _run([*pip, *wanted], PIP_TIMEOUT_S)
        if code != 0:
            raise RuntimeUnavailable(
                f"{who} needs {' '.join(wanted)}, which pip could not install: {last_line(out)}"
            )
        tmp = venv / f"{MARKER}.tmp"
        tmp.write_text(json.dumps({"requirements": wanted}))
        os.replace(tmp, marker)
    return python


def _jar_name(coordinate: str) -> str:
    parts = coordinate.split(":")
    if len(parts) != 3:
        raise ValueError(f"not groupId:artifactId:version: {coordinate!r}")
    return f"{parts[1]}-{parts[2]}.jar"


def ensure_jar(coordinate: str, who: str, root: Path | None = None) -> Path:
    """The local path of a Maven artifact's jar, fetched once with the machine's `mvn`."""
    jars = (root or cache_root()) / "jars"
    name = _jar_name(coordinate)
    final = jars / name
    with exclusive(jars / f".{name}.lock"):
        if final.exists():  # only ever renamed into place complete
            return final
        mvn = shutil.which("mvn")
        if mvn is None:
            raise RuntimeUnavailable(f"{who} needs {coordinate}, and no mvn is on PATH to fetch it")
        tmp = Path(tempfile.mkdtemp(prefix=".fetch-", dir=jars))
        try:
            # Run in the empty folder: a pom.xml in the caller's folder would change the goal.
            cmd = [mvn, "-q", "-B", "dependency:copy", f"-Dartifact={coordinate}"]
            code, out = _run([*cmd, f"-DoutputDirectory={tmp}"], MVN_TIMEOUT_S, cwd=tmp)
            if code != 0:
                raise RuntimeUnavailable(
                    f"{who} needs {coordinate}, which mvn could not fetch: {last_line(out)}"
                )
            if not (tmp / name).is_file():
                raise RuntimeUnavailable(f"{who} needs {coordinate}: mvn wrote no {name}")
            os.replace(tmp / name, final)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return final


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def runtime_of(python: str, pyspark: str, scala: str, jars: list[Path]) -> SparkRuntime:
    """A runtime of `python` and its fetched `jars`, with their checksums."""
    return SparkRuntime(
        python=python,
        pyspark_version=pyspark,
        scala=scala,
        jars=tuple(str(j) for j in jars),
        jar_sha256=tuple(sha256(j) for j in jars),
    )


def project_runtime(
    who: str,
    known: Mapping[str, tuple[str, ...]],
    version: str,
    spark_line: str,
    scala: str,
    root: Path | None,
) -> SparkRuntime:
    """A runtime on the project's own python and pyspark (jars built for `spark_line`):
    the Maven coordinates `known` lists for `version`, fetched; RuntimeUnavailable if the
    version is not known or this pyspark is of another line."""
    coordinates = known.get(version)
    if coordinates is None:
        listed = ", ".join(sorted(known))
        raise RuntimeUnavailable(f"{who} has no known Spark runtime (known: {listed})")
    pyspark = installed_version("pyspark")
    if not pyspark.startswith(f"{spark_line}."):
        raise RuntimeUnavailable(
            f"{who} is built for pyspark {spark_line}.x; this python has pyspark {pyspark}"
        )
    jars = [ensure_jar(coordinate, who, root) for coordinate in coordinates]
    return runtime_of(sys.executable, pyspark, scala, jars)
