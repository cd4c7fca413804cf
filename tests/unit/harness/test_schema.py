"""The scenario JSON Schema: generated from the model, kept in the repo, named by every
shipped scenario, and describing every key (issue 16, item 1)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from harness.cli import app
from harness.scenario import load_scenario
from harness.scenario.schema import MODELINE, SCHEMA_FILE, scenario_schema, schema_text

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"
SHIPPED = sorted(p for p in SCENARIOS.rglob("*.yaml") if "suites" not in p.parts)
REGENERATE = "instantbench schema > scenarios/scenario.schema.json"


def test_schema_file_in_the_repo_matches_the_model() -> None:
    assert SCHEMA_FILE.read_text() == schema_text(), (
        f"{SCHEMA_FILE} differs from the scenario model; regenerate it: {REGENERATE}"
    )


def test_schema_command_prints_the_generated_schema() -> None:
    result = CliRunner().invoke(app, ["schema"])
    assert result.exit_code == 0
    assert result.stdout == schema_text()


def _undescribed(schema: dict[str, Any]) -> list[str]:
    """Dotted paths of properties without a description (theirs or their $ref's)."""
    defs = schema.get("$defs", {})

    def described(prop: dict[str, Any]) -> bool:
        if "description" in prop:
            return True
        ref = prop.get("$ref") or next(
            (alt["$ref"] for alt in prop.get("anyOf", []) if "$ref" in alt), None
        )
        return ref is not None and "description" in defs[ref.rsplit("/", 1)[-1]]

    missing = []
    for owner, node in [("Scenario", schema), *defs.items()]:
        for name, prop in node.get("properties", {}).items():
            if not described(prop):
                missing.append(f"{owner}.{name}")
    return missing


def test_every_key_has_a_description() -> None:
    assert _undescribed(scenario_schema()) == []


def test_the_description_check_notices_a_missing_one() -> None:
    schema = {"properties": {"a": {"type": "string"}, "b": {"description": "x"}}}
    assert _undescribed(schema) == ["Scenario.a"]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(SCENARIOS)))
def test_shipped_scenario_names_the_schema_and_satisfies_it(path: Path) -> None:
    first = path.read_text().splitlines()[0]
    assert first.startswith(MODELINE), f"{path}: first line must be {MODELINE}<path>"
    target = (path.parent / first.removeprefix(MODELINE)).resolve()
    assert target == SCHEMA_FILE
    assert os.path.relpath(SCHEMA_FILE, path.parent) == first.removeprefix(MODELINE)
    jsonschema.Draft202012Validator(scenario_schema()).validate(yaml.safe_load(path.read_text()))
    load_scenario(path)  # the loader reads the comment as a comment


def test_schema_refuses_what_the_loader_refuses() -> None:
    validator = jsonschema.Draft202012Validator(scenario_schema())
    assert not validator.is_valid({"name": "x", "engine": {"instant_mod": "async"}})
    assert not validator.is_valid({"name": "x", "faults": [{"kind": "writer_crash"}]})
    assert not validator.is_valid(
        {"name": "x", "faults": [{"kind": "writer_crash", "at_s": 1, "target": "writer:x"}]}
    )
    assert validator.is_valid(
        {"name": "x", "faults": [{"kind": "writer_crash", "at_s": 1, "target": "writer:1"}]}
    )
