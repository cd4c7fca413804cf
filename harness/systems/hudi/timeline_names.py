"""Hudi's timeline file names, parsed (the standard library only).

Shared by the runner's timeline watch and the runtime side (a writer task's Python stage
on the Hudi runtime's python, which has neither the project nor fastavro): in Hudi 1.x
(table version 8, `.hoodie/timeline/`) `<requested>.<action>.requested`,
`<requested>.<action>.inflight` and `<requested>_<completed>.<action>`; in versions 6 and
earlier (directly in `.hoodie/`) a completed `<requested>.<action>` and a COMMIT's
`<requested>.inflight`.
"""

from __future__ import annotations

import os
import re

_COMPLETED = re.compile(r"^(\d+)_(\d+)\.([a-z_]+)$")
_PENDING = re.compile(r"^(\d+)\.([a-z_]+)\.(requested|inflight)$")
_LEGACY_INFLIGHT = re.compile(r"^(\d+)\.inflight$")  # a COMMIT's inflight file
_LEGACY_COMPLETED = re.compile(r"^(\d+)\.([a-z_]+)$")  # table version <= 6: no completion time


def parse_instant(name: str) -> tuple[str, str, str, str | None] | None:
    """(state, action, requested time, completion time) of a timeline file name, or None."""
    if match := _COMPLETED.match(name):
        return "completed", match.group(3), match.group(1), match.group(2)
    if match := _PENDING.match(name):
        return match.group(3), match.group(2), match.group(1), None
    if match := _LEGACY_INFLIGHT.match(name):
        return "inflight", "commit", match.group(1), None
    if match := _LEGACY_COMPLETED.match(name):
        return "completed", match.group(2), match.group(1), None
    return None


def pending_instants(folder: str, actions: tuple[str, ...] | list[str]) -> list[str]:
    """The requested times of `actions` instants in `folder` that have not completed."""
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return []
    pending: set[str] = set()
    completed: set[str] = set()
    for name in names:
        parsed = parse_instant(name)
        if parsed is None or parsed[1] not in actions:
            continue
        (completed if parsed[0] == "completed" else pending).add(parsed[2])
    return sorted(pending - completed)
