"""An instant on the timeline and its file name.

Pending:   `<requested>.<action>.requested` / `<requested>.<action>.inflight`, but an
           inflight commit is `<requested>.inflight`, as Hudi names it
Completed: `<requested>_<completed>.<action>` (Hudi 1.x, timeline layout 2); a compaction
completes as Hudi's `commit` action: `<requested>_<completed>.commit`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.truetime import InstantTiming

ACTIONS = ("commit", "deltacommit", "compaction", "rollback", "clean", "replacecommit")
REQUESTED, INFLIGHT, COMPLETED = "requested", "inflight", "completed"
STATES = (REQUESTED, INFLIGHT, COMPLETED)
# Actions whose files carry table data (what readers, OCC and incremental pulls look at).
DATA_ACTIONS = ("commit", "deltacommit", "replacecommit")
# Hudi's commits timeline: data writes and compactions (what a file slice view, the
# cleaner's retention and the archiver's `keep` count).
COMMIT_ACTIONS = (*DATA_ACTIONS, "compaction")

_ACTION = "|".join(ACTIONS)
_PENDING_RE = re.compile(rf"^(\d{{17}})\.({_ACTION})\.(requested|inflight)$")
# Hudi names an inflight commit `<requested>.inflight`, without its action (as its
# InstantFileNameGeneratorV2 does; a `.commit.inflight` file is no instant to Java Hudi).
_INFLIGHT_COMMIT_RE = re.compile(r"^(\d{17})\.inflight$")
_COMPLETED_RE = re.compile(rf"^(\d{{17}})_(\d{{17}})\.({_ACTION})$")
# The action a completed file of an action is named with (Hudi 1.x).
COMPLETED_AS = {"compaction": "commit"}


@dataclass(frozen=True)
class Instant:
    requested_time: str
    action: str
    state: str
    completion_time: str | None = None
    # How long generating the requested time took (set by Table.start_instant).
    timing: InstantTiming | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"unknown action {self.action!r}; allowed: {ACTIONS}")
        if self.state not in STATES:
            raise ValueError(f"unknown state {self.state!r}; allowed: {STATES}")
        if (self.state == COMPLETED) != (self.completion_time is not None):
            raise ValueError("completion_time is set exactly when the state is completed")

    @property
    def is_completed(self) -> bool:
        return self.state == COMPLETED

    @property
    def is_pending(self) -> bool:
        return self.state != COMPLETED

    @property
    def completed_at(self) -> str:
        """The completion time of an instant known to be completed (a pending one has none)."""
        if self.completion_time is None:
            raise ValueError(f"{self.file_name} is pending: it has no completion time")
        return self.completion_time

    @property
    def file_name(self) -> str:
        if self.state == COMPLETED:
            action = COMPLETED_AS.get(self.action, self.action)
            return f"{self.requested_time}_{self.completion_time}.{action}"
        return self.pending_file(self.state)

    def pending_file(self, state: str) -> str:
        if self.action == "commit" and state == INFLIGHT:
            return f"{self.requested_time}.inflight"
        return f"{self.requested_time}.{self.action}.{state}"

    def with_state(self, state: str, completion_time: str | None = None) -> Instant:
        return replace(self, state=state, completion_time=completion_time)


def parse_file_name(name: str, compaction_commits: bool = False) -> Instant | None:
    """The instant a timeline file name describes, or None for other files (temps, markers).

    `compaction_commits` (merge-on-read tables, whose data instants are deltacommits): a
    completed `commit` is a compaction, as in Hudi."""
    m = _COMPLETED_RE.match(name)
    if m:
        action = m.group(3)
        if action == "commit" and compaction_commits:
            action = "compaction"
        return Instant(m.group(1), action, COMPLETED, m.group(2))
    m = _PENDING_RE.match(name)
    if m and not (m.group(2) == "commit" and m.group(3) == INFLIGHT):
        return Instant(m.group(1), m.group(2), m.group(3))
    m = _INFLIGHT_COMMIT_RE.match(name)
    if m:
        return Instant(m.group(1), "commit", INFLIGHT)
    return None
