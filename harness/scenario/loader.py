"""Reading scenario files: YAML (duplicate keys are errors), overrides, validation."""

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from harness.scenario.errors import Problem, ScenarioError
from harness.scenario.matrix import expand_matrix
from harness.scenario.model import Scenario
from harness.scenario.overrides import apply_overrides
from harness.scenario.validate import validate_scenario
from harness.scenario.yaml_text import parse_yaml

# A scenario is a page of YAML; more is a wrong file (a log, /dev/zero), not a scenario.
MAX_FILE_BYTES = 1 << 20
# Values after expanding YAML aliases: a few hundred in a real scenario; an alias bomb
# (each alias repeating the one before) would expand to billions.
MAX_VALUES = 100_000


def _read_text(path: Path, source: str) -> str:
    try:
        with path.open("rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        problem = Problem("", f"cannot read the file: {exc.strerror or exc}")
        raise ScenarioError(source, [problem]) from None
    if len(data) > MAX_FILE_BYTES:
        problem = Problem("", f"larger than {MAX_FILE_BYTES} bytes; a scenario is a YAML file")
        raise ScenarioError(source, [problem])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problem = Problem(
            "", f"not a UTF-8 text file (byte {data[exc.start]:#04x} at offset {exc.start})"
        )
        raise ScenarioError(source, [problem]) from None


def _expanded_size(value: Any, seen: dict[int, int], path: set[int]) -> int:
    """How many values `value` holds once its YAML aliases are expanded (shared nodes are
    counted once per use, computed once); a node that contains itself is an error."""
    if not isinstance(value, dict | list):
        return 1
    if id(value) in path:
        raise ValueError("a YAML alias refers to a node that contains it")
    if id(value) not in seen:
        path.add(id(value))
        children = [*value.keys(), *value.values()] if isinstance(value, dict) else value
        seen[id(value)] = 1 + sum(_expanded_size(c, seen, path) for c in children)
        path.discard(id(value))
    return seen[id(value)]


def _check_size(raw: dict[str, Any], source: str) -> None:
    try:
        size = _expanded_size(raw, {}, set())
    except (ValueError, RecursionError) as exc:
        message = str(exc) if isinstance(exc, ValueError) else "nested too deeply"
        raise ScenarioError(source, [Problem("", message)]) from None
    if size > MAX_VALUES:
        problem = Problem("", f"{size} values after expanding aliases; allowed: {MAX_VALUES}")
        raise ScenarioError(source, [problem])


def read_raw(path: str | Path) -> dict[str, Any]:
    """The file's YAML, checked to be a mapping of a sane size (not yet validated)."""
    source = str(path)
    text = _read_text(Path(path), source)
    try:
        raw = parse_yaml(text)
    except yaml.YAMLError as exc:
        raise ScenarioError(source, [Problem("", f"not valid YAML: {exc}")]) from None
    if raw is None:
        problem = Problem("", "the file is empty; allowed: a YAML mapping of keys (`name:` ...)")
        raise ScenarioError(source, [problem])
    if not isinstance(raw, dict):
        problem = Problem("", "must be a YAML mapping of keys", type(raw).__name__)
        raise ScenarioError(source, [problem])
    _check_size(raw, source)
    return raw


def load_scenario(path: str | Path, overrides: Iterable[str] = ()) -> Scenario:
    """Load, override, validate (every matrix variant too) and return the scenario."""
    raw = read_raw(path)
    raw, problems = apply_overrides(Scenario, raw, overrides)
    if problems:
        raise ScenarioError(str(path), problems)
    _check_size(raw, str(path))  # `--set` values are YAML too
    scenario = validate_scenario(raw, str(path))
    expand_matrix(scenario)  # a matrix value that makes an invalid variant is an input error
    return scenario
