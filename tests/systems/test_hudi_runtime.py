"""Hudi's Spark runtime cache: one-line reasons when it cannot be had, and one fetch when
several processes ask at once."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.systems.hudi.runtime import HUDI_RUNTIMES, ensure_runtime
from harness.systems.spark_stream.runtime_cache import (
    MARKER,
    RuntimeUnavailable,
    ensure_jar,
    ensure_venv,
    last_line,
)

COORDINATE = HUDI_RUNTIMES["1.2.0"].artifacts[0]
# What `mvn -q -B dependency:copy` printed here for an artifact the registry does not serve.
MAVEN_NOT_FOUND = """\x1b[0m[ERROR] Failed to execute goal org.apache.maven.plugins:maven-dependency-plugin:2.8:copy (default-cli) on project standalone-pom: Unable to find artifact. Could not find artifact org.apache.hudi:hudi-spark3.5-bundle_2.12:jar:9.9.9 in central (https://registry.invalid/maven2)
[ERROR] 
[ERROR] Try downloading the file manually from the project website.
[ERROR] -> [Help 1]
[ERROR] 
[ERROR] [Help 1] http://wiki.invalid/MojoExecutionException
\x1b[0m"""  # noqa: E501, W291
FAKE_MVN = """#!/bin/sh
echo "$@" >> "$FAKE_MVN_LOG"
if [ -n "$FAKE_MVN_FAIL" ]; then cat "$FAKE_MVN_FAIL"; exit 1; fi
for a in "$@"; do
  case "$a" in
    -DoutputDirectory=*) out="${a#-DoutputDirectory=}" ;;
    -Dartifact=*) art="${a#-Dartifact=}" ;;
  esac
done
sleep 0.5
name=$(echo "$art" | awk -F: '{print $2"-"$3".jar"}')
printf 'not really a jar' > "$out/$name"
"""


@pytest.fixture
def fake_mvn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `mvn` first on PATH that logs each call and writes the jar (or fails)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    mvn = bin_dir / "mvn"
    mvn.write_text(FAKE_MVN)
    mvn.chmod(0o755)
    log = tmp_path / "mvn-calls.log"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_MVN_LOG", str(log))
    return log


def test_maven_s_error_comes_down_to_one_line_without_urls() -> None:
    line = last_line(MAVEN_NOT_FOUND)
    assert line == (
        "Unable to find artifact. Could not find artifact "
        "org.apache.hudi:hudi-spark3.5-bundle_2.12:jar:9.9.9 in central"
    )
    assert last_line("") == "no output"
    assert last_line("ERROR: x\nERROR: No matching distribution found for y\n") == (
        "ERROR: No matching distribution found for y"
    )


def test_an_unknown_version_names_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(RuntimeUnavailable, match=r"^hudi 0\.9\.9 has no known Spark runtime"):
        ensure_runtime("0.9.9", root=tmp_path)


def test_no_mvn_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # nothing there
    with pytest.raises(RuntimeUnavailable) as info:
        ensure_runtime("1.2.0", root=tmp_path)
    assert str(info.value) == f"hudi 1.2.0 needs {COORDINATE}, and no mvn is on PATH to fetch it"


def test_mvn_that_fails_is_named_with_its_reason(
    tmp_path: Path, fake_mvn: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    output = tmp_path / "maven-output.txt"
    output.write_text(MAVEN_NOT_FOUND)
    monkeypatch.setenv("FAKE_MVN_FAIL", str(output))
    with pytest.raises(RuntimeUnavailable) as info:
        ensure_jar(COORDINATE, "hudi 1.2.0", root=tmp_path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"hudi 1.2.0 needs {COORDINATE}, which mvn could not fetch: ")
    assert message.endswith("in central")
    jars = tmp_path / "jars"
    assert [p.name for p in jars.iterdir() if not p.name.endswith(".lock")] == []  # no leftovers


def test_concurrent_callers_fetch_the_jar_once(tmp_path: Path, fake_mvn: Path) -> None:
    code = (
        "import sys; from pathlib import Path; "
        "from harness.systems.spark_stream.runtime_cache import ensure_jar; "
        "print(ensure_jar(sys.argv[1], 'hudi 1.2.0', root=Path(sys.argv[2])))"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, COORDINATE, str(tmp_path)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    paths = {p.communicate(timeout=60)[0].strip() for p in procs}
    assert all(p.returncode == 0 for p in procs)
    jar = tmp_path / "jars" / "hudi-spark3.5-bundle_2.12-1.2.0.jar"
    assert paths == {str(jar)}
    assert jar.read_text() == "not really a jar"
    assert len(fake_mvn.read_text().splitlines()) == 1  # one fetch, the others waited for it
    assert sorted(p.name for p in jar.parent.iterdir()) == [f".{jar.name}.lock", jar.name]


def test_pip_that_fails_is_named_and_a_half_made_venv_is_not_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    half_made = tmp_path / "runtimes" / "pyspark-3.5.9"
    half_made.mkdir(parents=True)
    (half_made / "left-by-a-crash").write_text("")
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # no registry and no wheel folder: pip must fail
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path / "no-wheels"))
    with pytest.raises(RuntimeUnavailable) as info:
        ensure_venv("3.5.9", "hudi 1.2.0", root=tmp_path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("hudi 1.2.0 needs pyspark==3.5.9, which pip could not install: ")
    assert "pyspark==3.5.9" in message.split(": ", 1)[1]
    assert not (half_made / "left-by-a-crash").exists()
    assert not (half_made / MARKER).exists()  # never counted as present
