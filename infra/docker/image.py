"""The Spark image for the docker backend: its name, its build context and its tag.

The tag carries a hash of everything the image installs (the project's packages and
pyproject.toml, and the pinned pyspark/pyarrow/pandas versions), so executors in a
container always run the same code as the driver on the host; an image that is already
built is reused. `python -m infra.docker.image tag|context DIR|versions` is what
build_image.sh calls.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from infra.cache import cache_root, exclusive

REPO = "instantbench-spark"
BASE_IMAGE = "instantbench-debian:bookworm"
VENV_PYTHON = "/opt/venv/bin/python"  # the image's interpreter
# PYSPARK_PYTHON for the docker backend: a command name found on PATH, in the image
# /opt/venv/bin/instantbench-python, on the host a wrapper (see DockerBackend.driver_env).
PYTHON_COMMAND = "instantbench-python"
PACKAGES = ("engine", "harness", "infra", "reports")
TOP_FILES = ("pyproject.toml", "README.md")
PINNED = ("pyspark", "pyarrow", "pandas")
# The Spark runtimes of systems under test on a line of their own (Hudi: pyspark 3.5,
# harness/systems/hudi/runtime.py), each a venv of the image at runtime_root(version).
RUNTIME_PYSPARK = ("3.5.9",)
_SKIP_DIRS = {"__pycache__", ".pytest_cache", ".ruff_cache"}
_SKIP_SUFFIXES = (".pyc", ".pyo")


def runtime_root(pyspark_version: str) -> str:
    """Where the image holds the venv of a Spark runtime (its bin/spark-class, python)."""
    return f"/opt/runtimes/pyspark-{pyspark_version}"


def runtime_spark_home(pyspark_version: str) -> str:
    """The runtime's pyspark package in the image (its SPARK_HOME: bin/spark-class)."""
    return f"{runtime_root(pyspark_version)}/spark-home"


def runtime_python_command(pyspark_version: str) -> str:
    """PYSPARK_PYTHON for a runtime's executors in the image (as PYTHON_COMMAND)."""
    return f"{PYTHON_COMMAND}-{pyspark_version}"


def project_root() -> Path:
    return Path(__file__).resolve().parents[2]


def pinned_versions() -> dict[str, str]:
    """Versions installed on the host: the image installs the same ones."""
    return {name: metadata.version(name) for name in PINNED}


def project_version(root: Path | None = None) -> str:
    import tomllib

    root = root or project_root()
    with open(root / "pyproject.toml", "rb") as f:
        return str(tomllib.load(f)["project"]["version"])


def context_files(root: Path | None = None) -> list[Path]:
    """Files of the build context, relative to the project root, sorted."""
    root = root or project_root()
    files = [Path(name) for name in TOP_FILES if (root / name).is_file()]
    for pkg in PACKAGES:
        for path in sorted((root / pkg).rglob("*")):
            rel = path.relative_to(root)
            if (
                path.is_file()
                and not _SKIP_DIRS.intersection(rel.parts)
                and not path.name.endswith(_SKIP_SUFFIXES)
            ):
                files.append(rel)
    return sorted(files)


def content_hash(root: Path | None = None) -> str:
    root = root or project_root()
    digest = hashlib.sha256()
    for rel in context_files(root):
        digest.update(str(rel).encode() + b"\0")
        digest.update((root / rel).read_bytes() + b"\0")
    for name, version in sorted(pinned_versions().items()):
        digest.update(f"{name}=={version}\0".encode())
    digest.update(f"runtimes={' '.join(RUNTIME_PYSPARK)}\0".encode())
    return digest.hexdigest()[:12]


def image_tag(root: Path | None = None) -> str:
    """instantbench-spark:<project version>-<content hash>."""
    root = root or project_root()
    return f"{REPO}:{project_version(root)}-{content_hash(root)}"


def write_context(dest: Path, root: Path | None = None) -> Path:
    """Copy the build context (no tests, runs, caches or VCS data) into dest."""
    root = root or project_root()
    for rel in context_files(root):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target)
    return dest


def main(argv: list[str]) -> int:
    if argv[:1] == ["tag"]:
        print(image_tag())
    elif argv[:1] == ["context"] and len(argv) == 2:
        write_context(Path(argv[1]))
    elif argv[:1] == ["build-args"]:
        for name, version in pinned_versions().items():
            print(f"{name.upper()}_VERSION={version}")
        print(f"RUNTIME_PYSPARK={' '.join(RUNTIME_PYSPARK)}")
    else:
        print("usage: python -m infra.docker.image tag | context DIR | build-args", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


def image_exists(tag: str) -> bool:
    return (
        subprocess.run(
            ["docker", "image", "inspect", tag], capture_output=True, check=False
        ).returncode
        == 0
    )


def ensure_image(log: Path | None = None, timeout_s: float = 1800) -> str:
    """The image for the project's current code: reused when built, else built by
    build_image.sh (offline path; seconds when only the project changed, minutes from
    scratch). Returns its tag."""
    tag = image_tag()
    if image_exists(tag):
        return tag
    # One build at a time on this machine (two test lanes, two runs): two builds of one tag
    # would race for it, and a build prunes old project images another may be using.
    with exclusive(cache_root() / "docker-image.lock"):
        if image_exists(tag):  # built by the process that held the lock before
            return tag
        return _build(tag, log, timeout_s)


def _build(tag: str, log: Path | None, timeout_s: float) -> str:
    script = project_root() / "infra" / "docker" / "build_image.sh"
    env = {**os.environ, "PYTHON": sys.executable}
    with open(log or "/dev/null", "ab") as out:
        proc = subprocess.run(
            ["bash", str(script)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            timeout=timeout_s,
            check=False,
        )
    if proc.returncode != 0 or not image_exists(tag):
        where = f"; see {log}" if log else ""
        raise RuntimeError(f"building the docker image {tag} failed{where}")
    return tag
