"""Forced rounds: a stage's first attempts made to overlap by construction, not by its clock.

In a forced round every user of the stage begins its transaction before any of them
commits: the users meet before they begin (so each attempt starts with the stage's users
all running) and again after (so every transaction read the same timeline). With every
commit touching the same file groups, the round's first committer wins and each of the
others conflicts, however slow the machine. The stage does not end before its forced
rounds have (StepShape asks `done`); the attempts after them are the closed loop as
before. All users are greenlets of one process, so a gevent event is the barrier.
"""

from __future__ import annotations

from collections import Counter

import gevent.event

from infra.locust.shape import stage_users

# A user that never arrives (it died) holds the others no longer than this: half of a
# forced round's limit (harness/jobs/contention.py FORCED_ROUND_LIMIT_S), two meetings.
MEET_TIMEOUT_S = 60


class Rendezvous:
    def __init__(self, forced_rounds: int) -> None:
        self.forced_rounds = forced_rounds
        self._arrived: Counter[tuple[str, int, str]] = Counter()
        self._met: dict[tuple[str, int, str], gevent.event.Event] = {}
        self._finished: Counter[str] = Counter()

    def round_of(self, attempts_done: int) -> int | None:
        """The forced round of a user's next attempt in a stage (None: none is left)."""
        return attempts_done if attempts_done < self.forced_rounds else None

    def meet(self, stage: str, round_: int, phase: str) -> None:
        """Wait until every user of the stage has reached this phase of this round."""
        key = (stage, round_, phase)
        met = self._met.setdefault(key, gevent.event.Event())
        self._arrived[key] += 1
        if self._arrived[key] >= stage_users(stage):
            met.set()
        met.wait(MEET_TIMEOUT_S)

    def finished(self, stage: str) -> None:
        """One forced attempt of the stage has ended (committed, conflicted or failed)."""
        self._finished[stage] += 1

    def done(self, stage: str) -> bool:
        """Have all the stage's forced rounds ended, for every one of its users?"""
        return self._finished[stage] >= self.forced_rounds * stage_users(stage)
