"""JSON Schemas of the project's YAML files, generated from their pydantic models
(`instantbench schema [scenario|suite]`).

A copy of each is kept in the repository so that editors complete and check keys: each
shipped file names its schema in a `yaml-language-server` first line, and a unit test fails
when a copy and its model differ.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from harness.jobs.suite import SuiteSpec
from harness.scenario import Scenario

SCENARIOS_DIR = Path(__file__).resolve().parents[1] / "scenarios"
# kind -> (model, the copy in the repository)
SCHEMAS: dict[str, tuple[type[BaseModel], Path]] = {
    "scenario": (Scenario, SCENARIOS_DIR / "scenario.schema.json"),
    "suite": (SuiteSpec, SCENARIOS_DIR / "suites" / "suite.schema.json"),
}
# The first line of a YAML file that points an editor (yaml-language-server) at its schema.
MODELINE = "# yaml-language-server: $schema="
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def json_schema(kind: str) -> dict[str, Any]:
    model, _ = SCHEMAS[kind]
    return {"$schema": DIALECT, **model.model_json_schema()}


def schema_text(kind: str) -> str:
    return json.dumps(json_schema(kind), indent=2) + "\n"


def schema_file(kind: str) -> Path:
    return SCHEMAS[kind][1]
