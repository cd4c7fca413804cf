"""`instantbench faults`: every fault kind with its keys, targets, points and evidence.

Keys, types, defaults, targets and points come from the scenario's fault models
(harness/scenario/faults.py); where each kind is applied and what it records as evidence,
from its declaration (harness/faults/kinds.py).
"""

from __future__ import annotations

import textwrap
import types
from dataclasses import asdict, dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import annotated_types as at
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from harness.faults.kinds import PARTS, Evidence, FaultKind
from harness.scenario.fault_base import TargetForms
from harness.scenario.faults import CLUSTER_FAULTS, Fault

WIDTH = 100  # the project's line length
REQUIRED = "required"

# What each kind records (declared with the rest of the kind in harness/faults/kinds.py).
EVIDENCE: dict[str, Evidence] = {k.value: p.evidence for k, p in PARTS.items()}


@dataclass(frozen=True)
class KeyDoc:
    name: str
    type: str
    default: str  # REQUIRED when the key has no default
    description: str


@dataclass(frozen=True)
class KindDoc:
    kind: str
    summary: str
    notes: str
    keys: list[KeyDoc]
    targets: str
    points: str | None
    backends: str
    applied_in: str
    evidence: Evidence

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def fault_models() -> dict[str, type[BaseModel]]:
    """Fault kind -> its pydantic model, in the union's order."""
    union = get_args(Fault)[0]
    models = get_args(union)
    return {get_args(m.model_fields["kind"].annotation)[0]: m for m in models}


_BASIC = {int: "integer", float: "number", str: "string", bool: "true | false"}
_BOUNDS = ((at.Gt, "gt", ">"), (at.Ge, "ge", ">="), (at.Lt, "lt", "<"), (at.Le, "le", "<="))


def _bounds(metadata: list[Any]) -> str:
    parts = []
    for m in metadata:
        if isinstance(m, FieldInfo):
            parts.append(_bounds(m.metadata))
        for cls, attr, sign in _BOUNDS:
            if isinstance(m, cls):
                parts.append(f"{sign} {getattr(m, attr):g}")
    return ", ".join(p for p in parts if p)


def _type_text(tp: Any, metadata: list[Any] = ()) -> str:  # type: ignore[assignment]
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        return _type_text(args[0], [*metadata, *args[1:]])
    forms = next((m.forms for m in metadata if isinstance(m, TargetForms)), None)
    if forms:
        return " | ".join(forms)
    if origin is Literal:
        return " | ".join(str(a) for a in args)
    if origin in (Union, types.UnionType):
        return " | ".join(_type_text(a) for a in args if a is not type(None)) + " | none"
    if origin is list:
        return f"list of ({_type_text(args[0])})"
    bounds = _bounds(metadata)
    return f"{_BASIC.get(tp, getattr(tp, '__name__', str(tp)))}{' ' + bounds if bounds else ''}"


def _default_text(field: FieldInfo) -> str:
    if field.is_required():
        return REQUIRED
    return "none" if field.default is None else str(field.default)


def describe(kind: str, model: type[BaseModel]) -> KindDoc:
    fields = model.model_fields
    keys = [
        KeyDoc(name, _type_text(f.annotation, f.metadata), _default_text(f), f.description or "")
        for name, f in fields.items()
        if name != "kind"
    ]
    by_name = {k.name: k for k in keys}
    target = by_name.get("target")
    point = by_name.get("point")
    backends = CLUSTER_FAULTS.get(kind)
    return KindDoc(
        kind=kind,
        summary=fields["kind"].description or "",
        notes=" ".join((model.__doc__ or "").split()),
        keys=keys,
        targets=target.type if target else "none (the whole table's storage)",
        points=point.type if point else None,
        backends=", ".join(backends) if backends else "all",
        applied_in=", ".join(PARTS[FaultKind(kind)].applied_in),
        evidence=EVIDENCE[kind],
    )


def catalog() -> list[KindDoc]:
    return [describe(kind, model) for kind, model in fault_models().items()]


def _wrap(text: str, indent: int) -> list[str]:
    pad = " " * indent
    return textwrap.wrap(" ".join(text.split()), WIDTH, initial_indent=pad, subsequent_indent=pad)


def render(docs: list[KindDoc]) -> str:
    """Plain text, one block per kind; each key as `name  type = default` over its description."""
    blocks = []
    for d in docs:
        lines = _wrap(f"{d.kind}: {d.summary}", 0)
        lines += _wrap(d.notes, 2)
        lines += _wrap(f"targets: {d.targets}", 2)
        if d.points:
            lines += _wrap(f"points: {d.points}", 2)
        lines += [f"  backends: {d.backends}", f"  applied in: {d.applied_in}", "  keys:"]
        width = max(len(k.name) for k in d.keys)
        for k in d.keys:
            given = ", required" if k.default == REQUIRED else f" = {k.default}"
            lines.append(f"    {k.name:<{width}}  {k.type}{given}")
            lines += _wrap(k.description, 6 + width)
        lines += _wrap(f"evidence, recorded by {d.evidence.by} when {d.evidence.when}:", 2)
        lines += _wrap(", ".join(d.evidence.keys), 4)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"
