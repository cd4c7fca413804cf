"""The scenario file's JSON Schema, generated from the pydantic model (`instantbench schema`).

A copy is kept in the repository (scenarios/scenario.schema.json) so that editors complete
and check keys: each shipped scenario names it in a `yaml-language-server` comment, and a
unit test fails when the copy and the model differ.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.scenario.model import Scenario

SCHEMA_FILE = Path(__file__).resolve().parents[2] / "scenarios" / "scenario.schema.json"
# The first line of a scenario file that points an editor (yaml-language-server) at it.
MODELINE = "# yaml-language-server: $schema="
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def scenario_schema() -> dict[str, Any]:
    return {"$schema": DIALECT, **Scenario.model_json_schema()}


def schema_text() -> str:
    return json.dumps(scenario_schema(), indent=2) + "\n"
