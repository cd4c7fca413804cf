"""The JSON Schemas of scenario and suite files: generated from their models, kept in the
repo, named by every shipped file, and describing every key (issue 16, item 1)."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from typer.testing import CliRunner

from engine.config import Safety
from harness.cli import app
from harness.jobs.suite import load_suite
from harness.scenario import load_scenario
from harness.scenario.model import SafetySpec
from harness.schemas import MODELINE, SCENARIOS_DIR, SCHEMAS, json_schema, schema_file, schema_text

# Every shipped YAML file: the suites' folder holds suites, everything else is a scenario.
SHIPPED = sorted(SCENARIOS_DIR.rglob("*.yaml"))


def _kind(path: Path) -> str:
    return "suite" if "suites" in path.parts else "scenario"


@pytest.mark.parametrize("kind", sorted(SCHEMAS))
def test_schema_file_in_the_repo_matches_the_model(kind: str) -> None:
    path = schema_file(kind)
    regenerate = f"instantbench schema {kind} > {path.relative_to(SCENARIOS_DIR.parent)}"
    assert path.read_text() == schema_text(kind), (
        f"{path} differs from the {kind} model; regenerate it: {regenerate}"
    )


def test_schema_command_prints_the_generated_schemas() -> None:
    assert CliRunner().invoke(app, ["schema"]).stdout == schema_text("scenario")
    assert CliRunner().invoke(app, ["schema", "suite"]).stdout == schema_text("suite")
    assert CliRunner().invoke(app, ["schema", "nightly"]).exit_code == 2


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
    for owner, node in [("<root>", schema), *defs.items()]:
        for name, prop in node.get("properties", {}).items():
            if not described(prop):
                missing.append(f"{owner}.{name}")
    return missing


@pytest.mark.parametrize("kind", sorted(SCHEMAS))
def test_every_key_has_a_description(kind: str) -> None:
    assert _undescribed(json_schema(kind)) == []


def test_the_description_check_notices_a_missing_one() -> None:
    schema = {"properties": {"a": {"type": "string"}, "b": {"description": "x"}}}
    assert _undescribed(schema) == ["<root>.a"]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(SCENARIOS_DIR)))
def test_shipped_file_names_its_schema_and_satisfies_it(path: Path) -> None:
    kind = _kind(path)
    first = path.read_text().splitlines()[0]
    assert first.startswith(MODELINE), f"{path}: first line must be {MODELINE}<path>"
    named = first.removeprefix(MODELINE)
    assert named == os.path.relpath(schema_file(kind), path.parent)
    jsonschema.Draft202012Validator(json_schema(kind)).validate(yaml.safe_load(path.read_text()))
    # The loaders read the first line as the comment it is.
    load_suite(path) if kind == "suite" else load_scenario(path)


def test_schema_refuses_what_the_loader_refuses() -> None:
    validator = jsonschema.Draft202012Validator(json_schema("scenario"))
    assert not validator.is_valid({"name": "x", "engine": {"instant_mod": "async"}})
    assert not validator.is_valid({"name": "x", "faults": [{"kind": "writer_crash"}]})
    assert not validator.is_valid(
        {"name": "x", "faults": [{"kind": "writer_crash", "at_s": 1, "target": "writer:x"}]}
    )
    assert validator.is_valid(
        {"name": "x", "faults": [{"kind": "writer_crash", "at_s": 1, "target": "writer:1"}]}
    )


def test_the_safety_section_has_every_engine_switch_with_its_default() -> None:
    """engine.safety is declared key by key (harness/scenario/model.py SafetySpec): it must
    name the engine's switches (engine.config.Safety), in order, all on by default."""
    assert list(SafetySpec.model_fields) == [f.name for f in dataclasses.fields(Safety)]
    assert SafetySpec().model_dump() == Safety().to_dict()
