"""Source rate shapes (`source.rate`), a union discriminated by `shape`.

Only the keys each shape needs are allowed; harness/pipeline/rates.py turns them into
rows over time.
"""

import itertools
from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from harness.scenario.base import MAX_ROWS_PER_S, PosSeconds, Rows, RowsPerS, Seconds, Strict

DEFAULT_ROWS_PER_S = 20000.0


class ConstantRate(Strict):
    """The same rate for the whole run: in rows per second, or as a fraction of what this
    machine sustains for the scenario's shape (harness/jobs/ceiling.py)."""

    shape: Literal["constant"] = "constant"
    """A constant rate."""
    rows_per_s: Annotated[float, Field(gt=0, le=MAX_ROWS_PER_S)] | None = None
    """Rows per second (20000 when neither this nor fraction_of_ceiling is given)."""
    fraction_of_ceiling: Annotated[float, Field(gt=0, le=1)] | None = None
    """Instead of rows_per_s: this fraction of the ceiling, the highest rate this machine
    holds for the scenario's shape without falling behind, measured once by a short search
    and cached per machine and shape (docs/scenarios.md#load-relative-to-the-machine)."""
    ceiling_rows_per_s: Annotated[float, Field(gt=0, le=MAX_ROWS_PER_S)] | None = None
    """The ceiling fraction_of_ceiling is taken of: written by the harness into the run's
    scenario.yaml when it resolves the rate; give it to use a ceiling you measured."""

    @model_validator(mode="before")
    @classmethod
    def _derive_rate(cls, data: Any) -> Any:
        """rows_per_s follows from a fraction of a known ceiling (or is the default)."""
        if not isinstance(data, dict) or data.get("rows_per_s") is not None:
            return data
        fraction, ceiling = data.get("fraction_of_ceiling"), data.get("ceiling_rows_per_s")
        if fraction is None:
            return {**data, "rows_per_s": DEFAULT_ROWS_PER_S}
        if _number(fraction) and _number(ceiling) and 0 < fraction * ceiling <= MAX_ROWS_PER_S:
            return {**data, "rows_per_s": round(fraction * ceiling, 1)}
        return data

    @model_validator(mode="after")
    def _one_rate(self) -> "ConstantRate":
        fraction, ceiling = self.fraction_of_ceiling, self.ceiling_rows_per_s
        if fraction is None and ceiling is not None:
            raise ValueError("ceiling_rows_per_s is only for fraction_of_ceiling")
        if fraction is not None and ceiling is None and self.rows_per_s is not None:
            raise ValueError("give rows_per_s or fraction_of_ceiling, not both")
        if fraction is not None and ceiling is not None:
            derived = round(fraction * ceiling, 1)
            if self.rows_per_s is not None and abs(self.rows_per_s - derived) > 0.5:
                raise ValueError(
                    f"rows_per_s {self.rows_per_s:g} is not fraction_of_ceiling x "
                    f"ceiling_rows_per_s ({derived:g}): leave rows_per_s out"
                )
        return self

    @property
    def unresolved(self) -> bool:
        """A fraction of a ceiling not measured yet (the rate is not known)."""
        return self.rows_per_s is None

    def per_second(self) -> float:
        if self.rows_per_s is None:
            raise ValueError("source.rate: fraction_of_ceiling is not resolved to a rate yet")
        return self.rows_per_s


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


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
