"""The cleaner's retention window as the judge recomputes it, from the completed commits on
the final timeline and the configured retention (`table.services.clean_retain_commits`),
never from the clean plans the engine wrote for itself.

A clean requested at r may retain no fewer than the last N commits completed before r
(KEEP_LATEST_COMMITS: it plans under the table lock, then takes its requested time): its
boundary is the N-th latest such completion. Reads as of the boundary or later must find
their files; a read before the latest boundary is out of the window, and may fail only on
a file a clean was allowed to delete (superseded as of some clean's boundary)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from engine.timeline.instant import COMMIT_ACTIONS

CLEAN_ACTION = "clean"


def clean_boundaries(instants: Iterable[Mapping[str, Any]], retain_commits: int) -> list[str]:
    """The boundary each clean on the timeline (completed or pending) was allowed."""
    instants = list(instants)
    completions = sorted(  # a set: an archived instant may be listed twice
        {
            i["completed"]
            for i in instants
            if i["action"] in COMMIT_ACTIONS
            and i["state"] == "completed"
            and not i.get("rolled_back")
            and i.get("completed")
        }
    )
    out = []
    for clean in (i for i in instants if i["action"] == CLEAN_ACTION):
        before = [c for c in completions if c < clean["requested"]]
        if retain_commits >= 1 and len(before) > retain_commits:
            out.append(before[-retain_commits])
    return sorted(set(out))


def window_start(boundaries: Iterable[str]) -> str | None:
    """Where the window begins (None: nothing may have been cleaned)."""
    return max(boundaries, default=None)


def in_window(start: str | None, point: str | None) -> bool:
    """A read as of `point`, or a pull beginning after it (None: from the start)."""
    return start is None or (point is not None and point >= start)


def excused(failure: Mapping[str, Any], start: str | None, deletable: Iterable[str]) -> bool:
    """A read that raised is out of the window only if its point is before the window and
    what it failed on is a file some clean was allowed to delete."""
    point = failure.get("as_of", failure.get("begin"))
    if in_window(start, point):
        return False
    error = str(failure.get("error") or "")
    return any(name in error for name in deletable)
