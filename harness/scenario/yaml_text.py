"""YAML as scenario files and `--set` values are read: safe, duplicate keys are errors,
`1e12` is a number, and every error is one line."""

import re
from typing import Any

import yaml


class _ScenarioLoader(yaml.SafeLoader):
    """PyYAML keeps the last of two equal keys silently; a scenario must not."""


def _construct_unique_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> Any:
    loader.flatten_mapping(node)
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node)
        try:
            duplicate = key in seen
        except TypeError:  # a list or mapping as a key
            raise yaml.constructor.ConstructorError(
                None,
                None,
                "a key must be a plain value, not a list or mapping",
                key_node.start_mark,
            ) from None
        if duplicate:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r}", key_node.start_mark
            )
        seen.add(key)
    return loader.construct_mapping(node)


_ScenarioLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_unique_mapping
)
# YAML 1.1 (PyYAML) reads `1e12` as a string; YAML 1.2 and every reader of a scenario as a
# number. The model is strict about types, so it must be the number here.
_ScenarioLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


def parse_yaml(text: str) -> Any:
    """The value of a YAML text; raises yaml.YAMLError with a one-line message."""
    try:
        return yaml.load(text, Loader=_ScenarioLoader)  # a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise yaml.YAMLError(" ".join(str(exc).split())) from None
    except RecursionError:
        raise yaml.YAMLError("nested too deeply") from None
