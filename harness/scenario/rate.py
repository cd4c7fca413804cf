"""Source rate shapes (`source.rate`), a union discriminated by `shape`.

Only the keys each shape needs are allowed; harness/pipeline/rates.py turns them into
rows over time.
"""

import itertools
from typing import Annotated, Literal

from pydantic import Field, model_validator

from harness.scenario.base import MAX_ROWS_PER_S, PosSeconds, Rows, RowsPerS, Seconds, Strict


class ConstantRate(Strict):
    """The same rate for the whole run."""

    shape: Literal["constant"] = "constant"
    """A constant rate."""
    rows_per_s: Annotated[float, Field(gt=0, le=MAX_ROWS_PER_S)] = 20000
    """Rows per second."""


class Step(Strict):
    """One step of a `steps` rate."""

    at_s: Seconds
    """Seconds after run start when this step's rate begins."""
    rows_per_s: RowsPerS
    """Rows per second from at_s to the next step."""


class StepsRate(Strict):
    """Piecewise constant: each step's rate holds from its `at_s` to the next step."""

    shape: Literal["steps"]
    """Piecewise constant."""
    steps: list[Step] = Field(min_length=1)
    """The steps, at_s strictly increasing."""

    @model_validator(mode="after")
    def _increasing(self) -> "StepsRate":
        times = [s.at_s for s in self.steps]
        if any(b <= a for a, b in itertools.pairwise(times)):
            raise ValueError(f"steps[].at_s must strictly increase, got {times}")
        return self


class RampRate(Strict):
    """Linear from `from_rows_per_s` to `to_rows_per_s` over `duration_s` (None = the run)."""

    shape: Literal["ramp"]
    """A linear ramp."""
    from_rows_per_s: RowsPerS
    """Rows per second at run start."""
    to_rows_per_s: RowsPerS
    """Rows per second at the end of the ramp."""
    duration_s: PosSeconds | None = None
    """Seconds the ramp takes; none: the whole run."""


class SpikeRate(Strict):
    """`base_rows_per_s`, except `peak_rows_per_s` during [at_s, at_s + duration_s)."""

    shape: Literal["spike"]
    """A constant rate with one spike."""
    base_rows_per_s: RowsPerS
    """Rows per second outside the spike."""
    peak_rows_per_s: RowsPerS
    """Rows per second during the spike."""
    at_s: Seconds
    """Seconds after run start when the spike begins."""
    duration_s: PosSeconds
    """How long the spike lasts (s)."""


class UnboundedRate(Strict):
    """No rate limit: every micro-batch takes `rows_per_batch` rows at once."""

    shape: Literal["unbounded"]
    """No rate limit."""
    rows_per_batch: Rows
    """Rows every micro-batch takes."""


Rate = Annotated[
    ConstantRate | StepsRate | RampRate | SpikeRate | UnboundedRate,
    Field(discriminator="shape"),
]
