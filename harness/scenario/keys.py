"""Dotted keys (`engine.instant_mode`, `faults.0.at_s`): which exist, and reading them.

The key space is derived from the pydantic model itself, so `--set`, `matrix` and error
messages can never disagree with what the model accepts.
"""

import difflib
import inspect
import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel


class DottedKeyError(KeyError):
    """A dotted key that names nothing; `message` says what is allowed instead."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(key)
        self.key = key
        self.message = message

    def __str__(self) -> str:
        return self.message


def _unwrap(tp: Any) -> Any:
    while get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    return tp


def _members(tp: Any) -> list[Any]:
    """The alternatives of a (possibly optional or discriminated) union, or the type itself."""
    tp = _unwrap(tp)
    if get_origin(tp) in (Union, types.UnionType):
        return [_unwrap(a) for a in get_args(tp) if a is not type(None)]
    return [tp]


def _is_model(tp: Any) -> bool:
    return inspect.isclass(tp) and issubclass(tp, BaseModel)


# The fields that discriminate the scenario's unions (faults by kind, rates by shape).
DISCRIMINATORS = ("kind", "shape")


def _tag_values(model: type[BaseModel]) -> set[str]:
    """The discriminator tag of a union member: pydantic puts it in error locations."""
    tags: set[str] = set()
    for name in DISCRIMINATORS:
        field = model.model_fields.get(name)
        if field is not None and get_origin(field.annotation) is Literal:
            tags.update(str(v) for v in get_args(field.annotation))
    return tags


def union_tags(tps: list[Any]) -> list[str]:
    """All tags of the unions at a position, e.g. every fault kind."""
    return sorted({t for tp in tps for m in _members(tp) if _is_model(m) for t in _tag_values(m)})


def child_names(tps: list[Any]) -> list[str]:
    """The keys allowed one level below a position (model fields; `N` for list indices)."""
    names: list[str] = []
    for tp in tps:
        for member in _members(tp):
            if _is_model(member):
                names += [n for n in member.model_fields if n not in names]
            elif get_origin(member) is list and "N" not in names:
                names.append("N")
    return names


def step(tps: list[Any], segment: str, prefer_tag: bool = False) -> tuple[list[Any], bool]:
    """Types one level below `segment`, and whether `segment` was a discriminator tag.

    A tag (e.g. `writer_crash` in a pydantic error location) narrows the union instead of
    descending; an unknown segment returns no types. Pydantic error locations put the tag
    right after the union, so they `prefer_tag` (the `steps` shape has a `steps` field).
    """
    found: list[Any] = []
    tagged: list[Any] = []
    for tp in tps:
        for member in _members(tp):
            if _is_model(member):
                if segment in member.model_fields:
                    found.append(member.model_fields[segment].annotation)
                if segment in _tag_values(member):
                    tagged.append(member)
            elif get_origin(member) is list and segment.lstrip("-").isdigit():
                found.append(get_args(member)[0])
            elif get_origin(member) is dict:
                found.append(get_args(member)[1])
    if tagged and (prefer_tag or not found):
        return tagged, True
    return found, False


def resolve(root: type[BaseModel], dotted: str) -> list[Any]:
    """Check that `dotted` names a key of `root`; raise DottedKeyError with a suggestion."""
    tps: list[Any] = [root]
    done: list[str] = []
    for segment in dotted.split("."):
        below, was_tag = step(tps, segment)
        if not below or was_tag:
            allowed = child_names(tps)
            raise DottedKeyError(dotted, unknown_key_message(done, segment, allowed))
        tps = below
        done.append(segment)
    return tps


_BOUNDS = ("ge", "gt", "le", "lt")


def _bounds_of(obj: Any) -> dict[str, Any]:
    """ge/gt/le/lt of a constraint, a FieldInfo or a type (an optional type keeps them in
    its Annotated argument)."""
    found = {b: getattr(obj, b) for b in _BOUNDS if getattr(obj, b, None) is not None}
    for meta in getattr(obj, "metadata", ()):
        found |= _bounds_of(meta)
    annotation = getattr(obj, "annotation", obj)
    if get_origin(annotation) in (Annotated, Union, types.UnionType):
        for arg in get_args(annotation):
            found |= _bounds_of(arg)
    return found


def field_bounds(root: type[BaseModel], dotted: str) -> dict[str, Any]:
    """The numeric bounds (ge, gt, le, lt) the model puts on a dotted key; {} if none."""
    parent, _, leaf = dotted.rpartition(".")
    try:
        tps = resolve(root, parent) if parent else [root]
    except DottedKeyError:
        return {}
    for tp in tps:
        for member in _members(tp):
            if _is_model(member) and leaf in member.model_fields:
                return _bounds_of(member.model_fields[leaf])
    return {}


def unknown_key_message(parent: list[str], segment: str, allowed: list[str]) -> str:
    prefix = ".".join(parent)
    full = f"{prefix}.{segment}" if prefix else segment
    if not allowed:
        where = f"`{prefix}`" if prefix else "the top level"
        return f"unknown key `{full}`: {where} takes no keys below it"
    message = f"unknown key `{full}`"
    close = difflib.get_close_matches(segment, allowed, n=1)
    if close:
        message += f"; did you mean `{prefix + '.' if prefix else ''}{close[0]}`?"
    return message + f"; allowed here: {', '.join(allowed)}"


def get_dotted(obj: Any, dotted: str) -> Any:
    """Read a dotted key from a model instance (lists take integer segments)."""
    resolve(type(obj), dotted)
    for segment in dotted.split("."):
        if isinstance(obj, BaseModel):
            if segment not in type(obj).model_fields:
                # A valid key of another union member (offset_ms on a writer_crash).
                raise DottedKeyError(dotted, f"`{dotted}`: not a key of this {type(obj).__name__}")
            obj = getattr(obj, segment)
        elif isinstance(obj, list):
            try:
                obj = obj[int(segment)]
            except IndexError:
                raise DottedKeyError(dotted, f"`{dotted}`: index {segment} out of range") from None
        elif isinstance(obj, dict):
            if segment not in obj:
                raise DottedKeyError(dotted, f"`{dotted}`: no entry {segment!r}")
            obj = obj[segment]
    return obj
