"""`compare:` how `instantbench compare` decides when it has run enough pairs."""

from pydantic import Field, field_validator

from harness.metrics.compare import COMPARED
from harness.scenario.base import MAX_RUN_S, Strict


class ComparePlan(Strict):
    """Without `decide`, compare runs `repeat` pairs and looks once. With it, compare looks
    after every pair (from the third) and stops as soon as each metric named is decided
    (better, worse, or the same within 5%), after at most `repeat` pairs or when the next
    pair would end past `budget_s`; each look spends an even share of the error rate
    (harness/metrics/sequential.py)."""

    decide: list[str] = Field(default_factory=list)
    """Metrics to decide (compare.json's metric names, e.g. freshness_s.p99)."""
    budget_s: float | None = Field(default=None, gt=0, le=MAX_RUN_S)
    """Seconds the whole comparison may take (the ceiling's measurement included); none: no
    limit but `repeat`."""

    @field_validator("decide")
    @classmethod
    def _compared(cls, decide: list[str]) -> list[str]:
        unknown = [m for m in decide if m not in COMPARED]
        if unknown:
            raise ValueError(f"{unknown[0]!r} is not compared; allowed: {', '.join(COMPARED)}")
        return decide
