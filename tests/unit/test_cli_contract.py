"""The CLI's contract: validate, exit codes, and errors that name the file and the key."""

from pathlib import Path

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
