"""A step LoadTestShape: hold each user count for a while, then the next (all at once)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from locust import LoadTestShape


@dataclass(frozen=True)
class Stage:
    users: int
    duration_s: float


class StepShape(LoadTestShape):
    """Stages in order; a stage's users start within a second (spawn rate = users) so the
    stage's statistics measure that many concurrent writers, not a ramp toward it. A stage
    lasts its duration and, past it, until `ready` says what it had to do has happened
    (its forced rounds, infra/locust/rendezvous.py); the next stage's clock starts then."""

    abstract = True  # concrete subclasses set `stages`
    stages: tuple[Stage, ...] = ()
    ready: Callable[[str], bool] = staticmethod(lambda label: True)

    def __init__(self) -> None:
        super().__init__()
        self._index, self._started = 0, 0.0
        self.lasted: list[float] = []  # each ended stage's seconds

    def stage_index(self) -> int | None:
        elapsed = self.get_run_time()
        while self._index < len(self.stages):
            stage = self.stages[self._index]
            if elapsed - self._started < stage.duration_s or not self.ready(
                stage_label(stage.users)
            ):
                return self._index
            self.lasted.append(elapsed - self._started)
            self._index, self._started = self._index + 1, elapsed
        return None

    def tick(self) -> tuple[int, float] | None:
        index = self.stage_index()
        if index is None:
            return None
        users = self.stages[index].users
        # Locust warns above 100/s; no stage here has more users than that.
        return users, float(min(max(users, 1), 100))

    def label(self) -> str | None:
        """The statistics name of the current stage (requests are grouped by it)."""
        index = self.stage_index()
        return None if index is None else stage_label(self.stages[index].users)


def stage_label(users: int) -> str:
    return f"{users} users"


def stage_users(label: str) -> int:
    """The user count a stage label names (the inverse of stage_label)."""
    return int(label.split()[0])
