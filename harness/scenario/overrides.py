"""`--set KEY=VALUE` overrides: dotted keys applied to the raw scenario dict before validation."""

import copy
from collections.abc import Iterable
from typing import Any

import yaml
from pydantic import BaseModel

from harness.scenario.errors import Problem
from harness.scenario.keys import DottedKeyError, resolve
from harness.scenario.yaml_text import parse_yaml


def parse_override(text: str) -> tuple[str, Any]:
    """`engine.writers=4` -> ("engine.writers", 4); VALUE is a YAML scalar or flow list/map."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise DottedKeyError(text, f"--set {text!r}: expected KEY=VALUE, e.g. engine.writers=4")
    try:
        return key, parse_yaml(value)
    except yaml.YAMLError as exc:
        message = f"--set {key}: value {value!r} is not valid YAML: {exc}"
        raise DottedKeyError(key, message) from None


def set_dotted(raw: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    """A copy of `raw` with `value` at `dotted`; creates missing sections, lists take indices."""
    result = copy.deepcopy(raw)
    node: Any = result
    segments = dotted.split(".")
    for depth, segment in enumerate(segments):
        last = depth == len(segments) - 1
        where = ".".join(segments[: depth + 1])
        if isinstance(node, list):
            if not segment.lstrip("-").isdigit():
                raise DottedKeyError(dotted, f"`{where}`: a list takes an index 0..{len(node) - 1}")
            index = int(segment)
            if not -len(node) <= index < len(node):
                raise DottedKeyError(dotted, f"`{where}`: index out of range ({len(node)} entries)")
            if last:
                node[index] = value
            node = node[index]
        elif isinstance(node, dict):
            if last:
                node[segment] = value
            elif not isinstance(node.get(segment), dict | list):
                if node.get(segment) is None and segments[depth + 1].lstrip("-").isdigit():
                    raise DottedKeyError(
                        dotted, f"`{where}` has no entries; set the whole list: {where}=[...]"
                    )
                # `table:` left empty in YAML is None; a section to fill in.
                node[segment] = {} if node.get(segment) is None else node[segment]
            node = node.get(segment)
        else:
            parent = ".".join(segments[:depth])
            raise DottedKeyError(dotted, f"`{parent}` is a value ({node!r}), not a section")
    return result


def parse_axis(text: str) -> tuple[str, list[Any]]:
    """`--axis KEY=V1,V2` -> (KEY, [V1, V2]); each value is read as a `--set` value is."""
    key, sep, values = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise DottedKeyError("", "expected KEY=V1,V2, e.g. engine.instant_mode=blocking,async")
    parsed = []
    for value in (v.strip() for v in values.split(",")):
        try:
            parsed.append(parse_yaml(value))
        except yaml.YAMLError:
            parsed.append(value)  # validation names the key and what it allows
    return key, parsed


def apply_overrides(
    root: type[BaseModel], raw: dict[str, Any], overrides: Iterable[str]
) -> tuple[dict[str, Any], list[Problem]]:
    """Apply every override that names a real key; return problems for the others."""
    problems: list[Problem] = []
    for text in overrides:
        try:
            key, value = parse_override(text)
            resolve(root, key)
            raw = set_dotted(raw, key, value)
        except DottedKeyError as exc:
            problems.append(Problem(exc.key, f"{exc.message} (from --set {text})"))
    return raw, problems
