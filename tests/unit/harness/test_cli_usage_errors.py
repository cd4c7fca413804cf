"""Usage errors (harness/cli/usage.py): one line on stderr, exit 2, naming the option,
argument or command and what is allowed; no usage box, nothing on stdout."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from harness.cli import app

runner = CliRunner()


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["run", "--bogus", "x.yaml"], ["--bogus", "allowed:", "--out", "--set", "--quiet"]),
        (["run"], ["missing argument scenario", "scenario YAML file", "usage: instantbench run"]),
        (["frob"], ["'frob'", "allowed:", "run", "validate", "compare", "nightly"]),
        (["compare", "x.yaml", "--repeat", "abc"], ["'--repeat'", "integer"]),
        (["run", "a.yaml", "b.yaml"], ["b.yaml", "usage: instantbench run"]),
        (["cluster"], ["missing argument action", "up | down | status"]),
    ],
)
def test_a_usage_error_is_one_line_naming_what_is_allowed(args, names):
    result = runner.invoke(app, args, prog_name="instantbench", env={"COLUMNS": "60"})
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"instantbench {args[0]}" if args[0] != "frob" else "instantbench:")
    for name in names:
        assert name in lines[0]
    assert "╭" not in result.stderr and result.stdout == ""


def test_a_valid_command_line_still_runs():
    result = runner.invoke(app, ["validate", "scenarios/smoke.yaml"], prog_name="instantbench")
    assert result.exit_code == 0, result.output
    assert result.stderr == ""


def test_no_arguments_still_print_the_help():
    result = runner.invoke(app, [], prog_name="instantbench", env={"COLUMNS": "100"})
    assert result.exit_code == 2
    assert "Commands" in result.output and "run" in result.output
