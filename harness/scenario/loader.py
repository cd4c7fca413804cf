"""Reading scenario files: YAML (duplicate keys are errors), overrides, validation."""

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from harness.scenario.errors import Problem, ScenarioError, problems_from_validation
from harness.scenario.model import Scenario
from harness.scenario.overrides import apply_overrides


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML keeps the last of two equal keys silently; a scenario must not."""


def _construct_unique_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> Any:
    loader.flatten_mapping(node)
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node)


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping
)


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


def read_raw(path: str | Path) -> dict[str, Any]:
    source = str(path)
    try:
        text = Path(path).read_text()
    except OSError as exc:
        problem = Problem("", f"cannot read the file: {exc.strerror}")
        raise ScenarioError(source, [problem]) from None
    try:
        raw = yaml.load(text, Loader=_UniqueKeyLoader)  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise ScenarioError(source, [Problem("", f"not valid YAML: {exc}")]) from None
    return {} if raw is None else raw


def load_scenario(path: str | Path, overrides: Iterable[str] = ()) -> Scenario:
    """Load, override, validate (every matrix variant too) and return the scenario."""
    from harness.scenario.matrix import expand_matrix  # matrix imports this module

    raw = read_raw(path)
    if isinstance(raw, dict):
        raw, problems = apply_overrides(Scenario, raw, overrides)
        if problems:
            raise ScenarioError(str(path), problems)
    scenario = validate_scenario(raw, str(path))
    expand_matrix(scenario)  # a matrix value that makes an invalid variant is an input error
    return scenario
