"""Source rate shapes (`source.rate`), a union discriminated by `shape`.

Only the keys each shape needs are allowed; harness/pipeline/rates.py turns them into
rows over time.
"""

import itertools
from typing import Annotated, Literal

from pydantic import Field, model_validator

from harness.scenario.base import MAX_ROWS_PER_S, PosSeconds, Rows, RowsPerS, Seconds, Strict


class ConstantRate(Strict):
    shape: Literal["constant"] = "constant"
    rows_per_s: Annotated[float, Field(gt=0, le=MAX_ROWS_PER_S)] = 20000


class Step(Strict):
    at_s: Seconds
    rows_per_s: RowsPerS


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


class RampRate(Strict):
    """Linear from `from_rows_per_s` to `to_rows_per_s` over `duration_s` (None = the run)."""

    shape: Literal["ramp"]
    from_rows_per_s: RowsPerS
    to_rows_per_s: RowsPerS
    duration_s: PosSeconds | None = None


class SpikeRate(Strict):
    """`base_rows_per_s`, except `peak_rows_per_s` during [at_s, at_s + duration_s)."""

    shape: Literal["spike"]
    base_rows_per_s: RowsPerS
    peak_rows_per_s: RowsPerS
    at_s: Seconds
    duration_s: PosSeconds


class UnboundedRate(Strict):
    """No rate limit: every micro-batch takes `rows_per_batch` rows at once."""

    shape: Literal["unbounded"]
    rows_per_batch: Rows


Rate = Annotated[
    ConstantRate | StepsRate | RampRate | SpikeRate | UnboundedRate,
    Field(discriminator="shape"),
]
