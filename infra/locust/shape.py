"""A step LoadTestShape: hold each user count for a while, then the next (all at once)."""

from __future__ import annotations

from dataclasses import dataclass

from locust import LoadTestShape


@dataclass(frozen=True)
class Stage:
    users: int
    duration_s: float


class StepShape(LoadTestShape):
    """Stages in order; a stage's users start within a second (spawn rate = users) so the
    stage's statistics measure that many concurrent writers, not a ramp toward it."""

    abstract = True  # concrete subclasses set `stages`
    stages: tuple[Stage, ...] = ()

    def stage_index(self) -> int | None:
        elapsed = self.get_run_time()
        end = 0.0
        for i, stage in enumerate(self.stages):
            end += stage.duration_s
            if elapsed < end:
                return i
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
