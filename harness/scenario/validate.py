"""Validating a raw scenario mapping into the model (shared by the loader and the matrix)."""

from typing import Any

from pydantic import ValidationError

from harness.scenario.errors import Problem, ScenarioError, problems_from_validation
from harness.scenario.model import Scenario


def validate_scenario(raw: Any, source: str = "<scenario>") -> Scenario:
    """Validate a raw dict; `source` names it in errors (a file path, or `--axis`...)."""
    if not isinstance(raw, dict):
        problem = Problem("", "a scenario must be a YAML mapping of keys", type(raw).__name__)
        raise ScenarioError(source, [problem])
    try:
        scenario = Scenario.model_validate(raw)
    except ValidationError as exc:
        raise ScenarioError(source, problems_from_validation(Scenario, exc)) from None
    scenario._source = source
    return scenario
