"""Source rate shapes (`source.rate`), a union discriminated by `shape`.

Each shape can say how many rows per second it asks for at a time `t` (seconds since
run start), so the pipeline and the load shapes in infra/ share one definition.
"""

import itertools
from typing import Annotated, Literal

from pydantic import Field, model_validator

from harness.scenario.base import NonNegFloat, PosFloat, PosInt, Strict


class ConstantRate(Strict):
    shape: Literal["constant"] = "constant"
    rows_per_s: PosFloat = 20000

    def rows_per_s_at(self, t: float, run_s: float) -> float | None:
        return self.rows_per_s


class Step(Strict):
    at_s: NonNegFloat
    rows_per_s: NonNegFloat


class StepsRate(Strict):
    """Piecewise constant: each step's rate holds from its `at_s` to the next step."""

    shape: Literal["steps"]
    steps: list[Step] = Field(min_length=1)

    @model_validator(mode="after")
    def _increasing(self) -> "StepsRate":
        times = [s.at_s for s in self.steps]
        if any(b <= a for a, b in itertools.pairwise(times)):
            raise ValueError(f"steps[].at_s must strictly increase, got {times}")
        return self

    def rows_per_s_at(self, t: float, run_s: float) -> float | None:
        current = 0.0  # before the first step nothing is produced
        for step in self.steps:
            if t >= step.at_s:
                current = step.rows_per_s
        return current


class RampRate(Strict):
    """Linear from `from_rows_per_s` to `to_rows_per_s` over `duration_s` (None = the run)."""

    shape: Literal["ramp"]
    from_rows_per_s: NonNegFloat
    to_rows_per_s: NonNegFloat
    duration_s: PosFloat | None = None

    def rows_per_s_at(self, t: float, run_s: float) -> float | None:
        span = self.duration_s or run_s
        frac = min(max(t / span, 0.0), 1.0)
        return self.from_rows_per_s + frac * (self.to_rows_per_s - self.from_rows_per_s)


class SpikeRate(Strict):
    """`base_rows_per_s`, except `peak_rows_per_s` during [at_s, at_s + duration_s)."""

    shape: Literal["spike"]
    base_rows_per_s: NonNegFloat
    peak_rows_per_s: NonNegFloat
    at_s: NonNegFloat
    duration_s: PosFloat

    def rows_per_s_at(self, t: float, run_s: float) -> float | None:
        in_spike = self.at_s <= t < self.at_s + self.duration_s
        return self.peak_rows_per_s if in_spike else self.base_rows_per_s


class UnboundedRate(Strict):
    """No rate limit: every micro-batch takes `rows_per_batch` rows at once."""

    shape: Literal["unbounded"]
    rows_per_batch: PosInt

    def rows_per_s_at(self, t: float, run_s: float) -> float | None:
        return None  # open throttle: the pipeline, not the source, sets the pace


Rate = Annotated[
    ConstantRate | StepsRate | RampRate | SpikeRate | UnboundedRate,
    Field(discriminator="shape"),
]
