"""The CLI's contract: validate, exit codes, and errors that name the file and the key."""

import os
import signal
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli import app

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"
runner = CliRunner()


def test_every_shipped_scenario_validates():
    for path in sorted(SCENARIOS.rglob("*.yaml")):
        if "suites" in path.parts:  # nightly suites list scenarios; they are not one
            continue
        result = runner.invoke(app, ["validate", str(path)])
        assert result.exit_code == 0, (path, result.output)


def test_misspelt_key_exits_2_naming_file_and_key(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nengine: {instant_mod: async}\n")
    result = runner.invoke(app, ["validate", str(bad)])
    assert result.exit_code == 2
    assert str(bad) in result.output
    assert "engine.instant_mod" in result.output
    assert "instant_mode" in result.output  # the suggestion


def test_bad_value_from_set_exits_2_naming_the_allowed_values(tmp_path):
    result = runner.invoke(
        app, ["validate", str(SCENARIOS / "smoke.yaml"), "--set", "engine.instant_mode=eager"]
    )
    assert result.exit_code == 2
    assert "engine.instant_mode" in result.output
    assert "blocking" in result.output


def test_run_rejects_bad_input_before_starting_spark(tmp_path):
    result = runner.invoke(
        app,
        [
            "run",
            str(SCENARIOS / "smoke.yaml"),
            "--set",
            "cluster.backend=mainframe",
            "--out",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 2
    assert "cluster.backend" in result.output
    assert not any(tmp_path.iterdir())  # nothing was started or written


# --- hostile input: exit 2 and one line naming the file, the key and what is allowed -----


def one_line_error(result, *expected: str) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, lines
    for text in expected:
        assert text in lines[0], lines[0]
    return lines[0]


def hostile_files(tmp_path):
    """name -> a path that is not a scenario."""
    files = {
        "binary": bytes(range(256)),
        "latin1": "name: caf\xe9\n".encode("latin-1"),
        "empty": b"",
        "list": b"- a\n- b\n",
        "huge": b"#" * (2 << 20),
        "alias-bomb": b"a: &a [x, x, x, x, x, x, x, x, x, x]\n"
        + b"".join(
            f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n".encode()
            for p, c in zip("abcdef", "bcdefg", strict=True)
        )
        + b"name: bomb\n",
        "self-alias": b"name: x\nmatrix: &m {seed: *m}\n",
        "bad-yaml": b"name: [unclosed\n",
    }
    paths = {}
    for name, data in files.items():
        paths[name] = tmp_path / f"{name}.yaml"
        paths[name].write_bytes(data)
    paths["directory"] = tmp_path / "dir.yaml"
    paths["directory"].mkdir()
    paths["missing"] = tmp_path / "missing.yaml"
    return paths


def test_a_file_that_is_not_a_scenario_is_one_line(tmp_path):
    for name, path in hostile_files(tmp_path).items():
        for command in (["validate", str(path)], ["run", str(path), "--out", str(tmp_path)]):
            result = runner.invoke(app, command)
            line = one_line_error(result, str(path))
            assert "Traceback" not in result.output, (name, line)


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("duration_s=1e12", "duration_s: out of range; allowed: 1 <= duration_s <= 86400"),
        ("source.rate.rows_per_s=-5", "allowed: 0 < rows_per_s <= 10000000 (got -5)"),
        ("engine.writers=100000", "engine.writers: out of range; allowed: 1 <= writers <= 64"),
        ("engine.checkpoint_interval_s=0", "allowed: 0.1 <= checkpoint_interval_s <= 3600"),
        ("table.file_groups=0", "table.file_groups: out of range"),
        ("source.payload_bytes=1000000000000", "payload_bytes <= 1048576"),
        ("faults=[{kind: drop_ack, at_s: 500}]", "faults.0.at_s: must fall inside the run"),
        ("faults=[{kind: drop_ack, at_s: 12, count: 0}]", "faults.0.count: out of range"),
        ("faults=[{kind: storage_latency, at_s: 12, latency_ms: 1e9}]", "latency_ms <= 60000"),
        ("faults=[{kind: drop_ack, at_s: 12, seed: -1}]", "faults.0.seed: out of range"),
        ("engine.writers=yes", "engine.writers: must be an integer (got True)"),
        ("name=", "name: must be text (got an empty value)"),
        ("table.key=", "table.key: not allowed; allowed: 'id'"),
        (
            "engine.lock.provider=etcd",
            "engine.lock.provider: not allowed; allowed: 'file', 'service', 'storage' or "
            "'zookeeper' (got 'etcd')",
        ),
        ("foo", "expected KEY=VALUE"),
        ("=3", "expected KEY=VALUE"),
        ("engine.writerz=3", "did you mean `engine.writers`?"),
        ("faults.x.at_s=3", "unknown key `faults.x`"),
        ("faults.0.at_s=3", "`faults` has no entries"),  # smoke has no faults
        ("engine.writers=[1", "not valid YAML"),
        ("matrix={engine.writers: [1, 1000]}", "matrix variant engine.writers=1000"),
        (
            "matrix={seed: [1, 2, 3, 4, 5, 6, 7], warmup_s: [1, 2, 3, 4, 5, 6, 7],"
            " repeat: [1, 2, 3, 4, 5, 6]}",
            "294 variants; allowed: at most 256",
        ),
    ],
)
def test_bad_values_and_set_syntax_are_one_line(override, expected):
    smoke = str(SCENARIOS / "smoke.yaml")
    result = runner.invoke(app, ["validate", smoke, "--set", override])
    one_line_error(result, smoke, expected)


def test_messages_are_printed_verbatim_not_as_markup(tmp_path):
    missing = tmp_path / "a[red]b[/red].yaml"
    one_line_error(runner.invoke(app, ["validate", str(missing)]), str(missing))
    result = runner.invoke(app, ["validate", str(SCENARIOS / "smoke.yaml"), "--set", "name=x[b]y"])
    one_line_error(result, "(got 'x[b]y')", "^[a-z0-9-]+$")


@pytest.mark.parametrize(
    ("axis", "expected"),
    [
        ("engine.writers", "expected KEY=V1,V2"),
        ("=1,2", "expected KEY=V1,V2"),
        ("engine.writerz=1,2", "did you mean `engine.writers`?"),
        ("engine.writers=1,1000", "1 <= writers <= 64"),
        ("engine.writers=1,two", "engine.writers: must be an integer"),
        ("name=a,b", "cannot be varied"),
        ("engine.writers=2", "2 to 6 variants, this one has 1"),
        ("engine.checkpoint_interval_s=1,2,3,4,5,6,7", "2 to 6 variants, this one has 7"),
    ],
)
def test_compare_rejects_a_bad_axis_before_running(tmp_path, axis, expected):
    smoke = str(SCENARIOS / "smoke.yaml")
    result = runner.invoke(app, ["compare", smoke, "--axis", axis, "--out", str(tmp_path)])
    one_line_error(result, expected)
    assert not any(tmp_path.iterdir())


def test_capacity_rejects_a_grid_value_out_of_range_before_running(tmp_path):
    smoke = str(SCENARIOS / "smoke.yaml")
    for option, value, expected in [
        ("--writers", "1,100000", "1 <= writers <= 64"),
        ("--rates", "1e12", "rows_per_s <= 10000000"),
        ("--intervals", "0.01", "0.1 <= checkpoint_interval_s"),
        ("--rates", "abc", "--rates"),
    ]:
        result = runner.invoke(app, ["capacity", smoke, option, value, "--out", str(tmp_path)])
        one_line_error(result, expected)
    assert not any(tmp_path.rglob("result.json"))


def test_report_needs_a_run_result(tmp_path):
    one_line_error(runner.invoke(app, ["report", str(tmp_path)]), "no result.json")
    for text, expected in [("{bad", "not readable as JSON"), ("[]", "not a run result")]:
        (tmp_path / "result.json").write_text(text)
        one_line_error(runner.invoke(app, ["report", str(tmp_path)]), expected)


@pytest.mark.parametrize("command", ["nightly", "matrix"])
def test_nightly_and_matrix_reject_bad_suites_with_one_line(tmp_path, command):
    smoke = SCENARIOS / "smoke.yaml"
    suites = {
        "bad-set": f"name: s\nscenarios:\n  - scenario: {smoke}\n    set: [duration_s=1e12]\n",
        "no-file": "name: s\nscenarios:\n  - scenario: nope.yaml\n",
        "not-list": "name: s\nscenarios: 3\n",
        "repeat": f"name: s\nscenarios:\n  - scenario: {smoke}\n    repeat: 100000000000\n",
        "timeout": "name: s\nbenchmarks: {path: b, timeout_s: 1e300}\n",
    }
    expected = {
        "bad-set": "scenarios.0: ",
        "no-file": "cannot read the file",
        "not-list": "scenarios: must be a list",
        "repeat": "scenarios.0.repeat: out of range; allowed: 1 <= repeat <= 10000",
        "timeout": "benchmarks.timeout_s: out of range; allowed: 0 < timeout_s <= 86400",
    }
    for name, text in suites.items():
        suite = tmp_path / f"{name}.yaml"
        suite.write_text(text)
        result = runner.invoke(app, [command, str(suite), "--store", str(tmp_path / "store")])
        one_line_error(result, str(suite), expected[name])


def test_a_cluster_that_cannot_start_is_exit_2_with_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-docker.sock")  # no engine there
    smoke = str(SCENARIOS / "smoke.yaml")
    args = ["run", smoke, "--set", "cluster.backend=docker", "--out", str(tmp_path / "runs")]
    one_line_error(runner.invoke(app, args), "cluster: ")


# It holds a standalone master's address: its lane's (tests/conftest.py), where no other
# test's cluster can be.
@pytest.mark.cluster
def test_a_cluster_whose_port_is_taken_is_exit_2_with_one_line(tmp_path):
    """Checked before anything starts: no JVM, nothing to tear down."""
    import socket

    from infra.cluster.addresses import default_master_host

    master = default_master_host()  # the run's cluster goes there too
    holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        holder.bind((master, 7077))
        holder.listen()
        smoke = str(SCENARIOS / "smoke.yaml")
        args = ["run", smoke, "--set", "cluster.backend=standalone", "--out", str(tmp_path)]
        one_line_error(runner.invoke(app, args), f"cluster: {master}:7077 is in use")
    finally:
        holder.close()


def test_a_multi_line_cluster_error_is_printed_as_its_first_line(tmp_path, monkeypatch):
    from harness.runner import run as run_module
    from infra.cluster import ClusterError

    def no_cluster(scenario, paths):
        raise ClusterError("worker:1 (127.0.0.11) exited during start-up; see w.log:\nlog tail")

    monkeypatch.setattr(run_module, "start_cluster", no_cluster)
    smoke = str(SCENARIOS / "smoke.yaml")
    result = runner.invoke(app, ["run", smoke, "--out", str(tmp_path)])
    one_line_error(result, "cluster: worker:1 (127.0.0.11) exited during start-up; see w.log:")


def test_sigterm_during_a_command_is_exit_2_with_one_line(tmp_path, monkeypatch):
    from harness.runner import run as run_module

    def terminated(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)  # raised as Interrupted right here
        raise AssertionError("SIGTERM did not stop the command")

    monkeypatch.setattr(run_module, "run_scenario", terminated)
    result = runner.invoke(app, ["run", str(SCENARIOS / "smoke.yaml"), "--out", str(tmp_path)])
    one_line_error(result, "interrupted by SIGTERM")
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # the handler is gone again


def test_a_table_or_run_directory_that_cannot_be_made_is_one_line(tmp_path):
    smoke = str(SCENARIOS / "smoke.yaml")
    (tmp_path / "file").write_text("not a directory")
    bad_table = ["--set", f"table.path={tmp_path / 'file' / 'table'}", "--out", str(tmp_path)]
    result = runner.invoke(app, ["run", smoke, *bad_table])
    one_line_error(result, smoke, "table.path: cannot create the table")
    result = runner.invoke(app, ["run", smoke, "--out", str(tmp_path / "file" / "runs")])
    one_line_error(result, "cannot create a run directory")
