"""Matrix expansion: one validated scenario per combination of the matrix values."""

import itertools
import math
import re
from typing import Any

from harness.scenario.errors import Problem, ScenarioError
from harness.scenario.model import DEFAULT_CHECKS, Scenario
from harness.scenario.overrides import set_dotted
from harness.scenario.system import default_checks
from harness.scenario.validate import validate_scenario

# Each variant is a run (45-95 s); more than this is a typo, not a plan.
MAX_VARIANTS = 256


def _slug(value: Any) -> str:
    return re.sub(r"[^a-z0-9]+", "-", str(value).lower()).strip("-")


def _labels(keys: list[str]) -> list[str]:
    """The last key segment names a variant part, unless two keys share it."""
    last = [k.split(".")[-1] for k in keys]
    return [k if last.count(short) > 1 else short for k, short in zip(keys, last, strict=True)]


def variant_name(keys: list[str], values: tuple[Any, ...]) -> str:
    """`instant-mode-blocking`: safe for the run directory name `<scenario>-<ts>-<variant>`."""
    labels = _labels(keys)
    return "-".join(f"{_slug(k)}-{_slug(v)}" for k, v in zip(labels, values, strict=True))


def _follow_system(raw: dict[str, Any], base: dict[str, Any]) -> dict[str, Any]:
    """A variant that changes `system.kind` takes that system's version and default checks,
    not the base's (a version or checks the variant sets itself stay)."""
    kind, base_kind = raw["system"]["kind"], base["system"]["kind"]
    if kind == base_kind:
        return raw
    out = {**raw, "system": dict(raw["system"])}
    if out["system"].get("version") == base["system"].get("version"):
        out["system"]["version"] = None
    if raw.get("checks") == _default_checks(base):
        out["checks"] = _default_checks(out)
    return out


def _default_checks(raw: dict[str, Any]) -> list[str]:
    without = {k: v for k, v in raw.items() if k != "checks"}
    return list(default_checks(without).get("checks", DEFAULT_CHECKS))


def matrix_points(matrix: dict[str, list[Any]] | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each variant as a dotted key -> value: the cartesian product of a mapping's values
    (keys in file order), or a list's variants as written."""
    if isinstance(matrix, list):
        return [dict(point) for point in matrix]
    keys = list(matrix)
    return [dict(zip(keys, values, strict=True)) for values in itertools.product(*matrix.values())]


def _variant_count(matrix: dict[str, list[Any]] | list[dict[str, Any]]) -> int:
    if isinstance(matrix, list):
        return len(matrix)
    return math.prod(len(values) for values in matrix.values())


def expand_matrix(scenario: Scenario) -> list[tuple[str, Scenario]]:
    """[(variant name, resolved scenario with an empty matrix)]; [("", scenario)] without one.

    Variants come in matrix order (a mapping's cartesian product, keys in file order, or a
    list's order), so interleaving repetitions stays deterministic.
    """
    if not scenario.matrix:
        return [("", scenario)]
    count = _variant_count(scenario.matrix)
    if count > MAX_VARIANTS:
        problem = Problem("matrix", f"{count} variants; allowed: at most {MAX_VARIANTS}")
        raise ScenarioError(scenario.source_file, [problem])
    base = scenario.model_dump(mode="json")
    base["matrix"] = {}
    variants: list[tuple[str, Scenario]] = []
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for point in matrix_points(scenario.matrix):
        raw = base
        for key, value in point.items():
            raw = set_dotted(raw, key, value)
        raw = _follow_system(raw, base)
        label = ", ".join(f"{k}={v!r}" for k, v in point.items())
        try:
            variant = validate_scenario(raw, scenario.source_file)
        except ScenarioError as exc:
            problems += [
                Problem(p.key, f"{p.message} [matrix variant {label}]", p.value)
                for p in exc.problems
            ]
            continue
        name = variant_name(list(point), tuple(point.values()))
        seen[name] = seen.get(name, 0) + 1
        variants.append((name if seen[name] == 1 else f"{name}-{seen[name]}", variant))
    if problems:
        raise ScenarioError(scenario.source_file, problems)
    return variants
