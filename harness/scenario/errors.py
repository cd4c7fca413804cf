"""ScenarioError: each problem names the file, the dotted key, the bad value, what is allowed."""

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from harness.scenario.keys import (
    child_names,
    field_bounds,
    step,
    union_tags,
    unknown_key_message,
)

_MISSING = object()
MAX_SHOWN = 80  # characters of a bad value shown in a message

# Pydantic's type errors, as what the key takes.
_TYPES = {
    "int_type": "must be an integer",
    "float_type": "must be a number",
    "string_type": "must be text",
    "bool_type": "must be true or false",
    "list_type": "must be a list",
    "dict_type": "must be a mapping of keys",
    "model_type": "must be a mapping of keys",
    "model_attributes_type": "must be a mapping of keys",
    "finite_number": "must be a finite number",
    "invalid_key": "a key must be text",
}
_BOUND_KINDS = ("greater_than", "greater_than_equal", "less_than", "less_than_equal")


@dataclass(frozen=True)
class Problem:
    key: str  # dotted key, e.g. `engine.instant_mode` ("" for the whole file)
    message: str  # what is wrong and what is allowed
    value: Any = _MISSING

    def text(self) -> str:
        """One line: the key, what is wrong and allowed, the value given."""
        # A whole section as the "value" buries the message; the key already points at it.
        shown = self.value is not _MISSING and not isinstance(self.value, dict)
        got = f" (got {_shown(self.value)})" if shown else ""
        where = f"{self.key}: " if self.key else ""
        return " ".join(f"{where}{self.message}{got}".split())


def _shown(value: Any) -> str:
    if value is None:
        return "an empty value"
    text = repr(value)
    return text if len(text) <= MAX_SHOWN else f"{text[: MAX_SHOWN - 3]}..."


class ScenarioError(ValueError):
    def __init__(self, file: str, problems: list[Problem]) -> None:
        self.file = file
        self.problems = problems
        super().__init__("\n".join(f"{file}: {p.text()}" for p in problems))


def problems_from_validation(root: type[BaseModel], exc: ValidationError) -> list[Problem]:
    problems: list[Problem] = []
    for error in exc.errors(include_url=False):
        if error["type"] == "scenario_rules":
            problems += error["ctx"]["problems"]
        else:
            problems.append(_one(root, error))
    return problems


def _one(root: type[BaseModel], error: Any) -> Problem:
    segments, allowed_keys = _key_path(root, error["loc"])
    key = ".".join(segments)
    kind, ctx, value = error["type"], error.get("ctx", {}), error.get("input")
    if kind == "extra_forbidden":
        message = unknown_key_message(segments[:-1], segments[-1], allowed_keys)
        return Problem(key, message, value)
    if kind == "missing":
        return Problem(key, "required key is missing")
    if kind == "literal_error":
        return Problem(key, f"not allowed; allowed: {ctx['expected']}", value)
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        tag = ctx["discriminator"].strip("'")
        tag_key = f"{key}.{tag}" if key else tag
        expected = ctx.get("expected_tags") or _tags_hint(root, segments)
        got = ctx.get("tag", _MISSING)
        return Problem(tag_key, f"not allowed; allowed: {expected}", got)
    if kind == "value_error":
        # Our own validators already phrase the allowed values.
        return Problem(key, str(ctx.get("error", error["msg"])), value)
    if kind == "int_type" and isinstance(value, float):
        return Problem(
            key, "must be an integer, written without a decimal point or exponent", value
        )
    if kind in _TYPES:
        return Problem(key, _TYPES[kind], value)
    if kind in _BOUND_KINDS:
        return Problem(key, f"out of range; allowed: {_range(root, key, ctx)}", value)
    if kind == "string_pattern_mismatch":
        return Problem(key, f"not allowed; allowed: text matching {ctx['pattern']}", value)
    if kind in ("string_too_short", "too_short") and ctx.get("min_length") == 1:
        return Problem(key, "must not be empty", value)
    if kind in ("string_too_long", "too_long"):
        return Problem(key, f"too long; allowed: at most {ctx['max_length']}", value)
    return Problem(key, error["msg"], value)


def _range(root: type[BaseModel], key: str, ctx: dict[str, Any]) -> str:
    """`1 <= writers <= 64`: both bounds of the key, not only the one it crossed."""
    bounds = {b: _number(v) for b, v in {**field_bounds(root, key), **ctx}.items()}
    low = next((f"{bounds[b]} {op} " for b, op in (("ge", "<="), ("gt", "<")) if b in bounds), "")
    high = next((f" {op} {bounds[b]}" for b, op in (("le", "<="), ("lt", "<")) if b in bounds), "")
    return f"{low}{key.rpartition('.')[2] or 'value'}{high}"


def _number(value: Any) -> str:
    """10000000, not 1e+07; 0.1 stays 0.1."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


def _key_path(root: type[BaseModel], loc: tuple[Any, ...]) -> tuple[list[str], list[str]]:
    """The dotted segments of a pydantic loc without discriminator tags, and the keys allowed
    at the last segment's level (for unknown-key suggestions)."""
    tps: list[Any] = [root]
    segments: list[str] = []
    allowed: list[str] = child_names(tps)
    after_tag = False
    for raw in loc:
        segment = str(raw)
        # A tag never follows a tag: `steps.steps` is the `steps` shape, then its field.
        below, was_tag = step(tps, segment, prefer_tag=not after_tag)
        after_tag = was_tag
        if was_tag:
            tps = below
            continue
        allowed = child_names(tps)
        segments.append(segment)
        tps = below
    return segments, allowed


def _tags_hint(root: type[BaseModel], segments: list[str]) -> str:
    tps: list[Any] = [root]
    for segment in segments:
        tps, _ = step(tps, segment)
    return ", ".join(repr(t) for t in union_tags(tps))
