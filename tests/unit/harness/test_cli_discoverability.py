"""`instantbench faults`, examples in every `--help`, shell completion (issue 16, item 2)."""

from __future__ import annotations

import json
from typing import Annotated, Literal

import pytest
import typer
from pydantic import Field
from typer.testing import CliRunner

from harness.cli import app
from harness.faults.catalog import EVIDENCE, REQUIRED, catalog, describe, fault_models
from harness.scenario.base import Strict
from harness.scenario.faults import WriterTarget

runner = CliRunner()
COMMANDS = sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


def test_every_fault_kind_has_its_evidence_declared() -> None:
    assert set(EVIDENCE) == set(fault_models())


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_help_has_an_example(command: str) -> None:
    result = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "Examples:" in result.output and f"$ instantbench {command}" in result.output


def test_shell_completion_script_and_answers() -> None:
    script = runner.invoke(app, ["--show-completion", "bash"], prog_name="instantbench")
    assert script.exit_code == 0 and "_INSTANTBENCH_COMPLETE=complete_bash" in script.output

    def complete(words: str) -> list[str]:
        env = {
            "_INSTANTBENCH_COMPLETE": "complete_bash",
            "COMP_WORDS": words,
            "COMP_CWORD": str(len(words.split()) - 1),
        }
        return runner.invoke(app, [], prog_name="instantbench", env=env).output.split()

    assert complete("instantbench fau") == ["faults"]
    assert complete("instantbench faults clock") == ["clock_skew"]


def test_faults_lists_every_kind_with_keys_targets_points_and_evidence() -> None:
    result = runner.invoke(app, ["faults"])
    assert result.exit_code == 0
    text = result.output
    for kind, model in fault_models().items():
        block = text[text.index(f"{kind}: ") :].split("\n\n")[0]
        for key in model.model_fields:
            if key != "kind":
                assert f"\n    {key} " in block, (kind, key)
        assert "evidence, recorded by" in block
    crash = text[text.index("writer_crash: ") :].split("\n\n")[0]
    assert "targets: writer:N | random" in crash
    assert "points: before_flush | mid_flush | after_flush_before_event | after_event" in crash
    assert "retry_attempt" in crash and "retry of the task" in crash


def test_faults_json_for_one_kind_and_unknown_kinds() -> None:
    result = runner.invoke(app, ["faults", "delay_ack", "--json"])
    (doc,) = json.loads(result.stdout)
    keys = {k["name"]: k for k in doc["keys"]}
    assert keys["delay_s"]["default"] == REQUIRED and keys["delay_s"]["type"].startswith("number >")
    assert keys["count"]["default"] == "1" and keys["target"]["type"] == "coordinator"
    assert doc["evidence"]["keys"][:2] == ["checkpoint_id", "delay_s"]
    assert "handled the late ACK" in doc["evidence"]["when"]
    assert all(k.description for d in catalog() for k in d.keys)
    unknown = runner.invoke(app, ["faults", "disk_full"])
    assert unknown.exit_code == 2 and "writer_crash" in unknown.output


def test_the_listing_is_generated_from_the_model() -> None:
    class Probe(Strict):
        kind: Literal["probe"]
        """Probe the listing."""
        at_s: Annotated[float, Field(ge=0, le=60)]
        """When."""
        target: WriterTarget = "random"
        """Who."""
        point: Literal["a", "b"] | None = None
        """Where."""

    doc = describe("writer_crash", Probe)
    assert doc.summary == "Probe the listing."
    assert [(k.name, k.type, k.default) for k in doc.keys] == [
        ("at_s", "number >= 0, <= 60", REQUIRED),
        ("target", "writer:N | random", "random"),
        ("point", "a | b | none", "none"),
    ]
    assert doc.targets == "writer:N | random" and doc.points == "a | b | none"
