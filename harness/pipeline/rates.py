"""Arrival-rate shapes: how many source rows exist at a given second of the run.

Every bounded shape is a list of linear segments (start_s, end_s, rate_from, rate_to), so
constant, steps, ramp and spike share one integral. `unbounded` has no time law: every
micro-batch takes `rows_per_batch` rows at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

Segment = tuple[float, float, float, float]
FOREVER = float("inf")


@dataclass(frozen=True)
class RateLaw:
    segments: tuple[Segment, ...]
    rows_per_batch: int | None = None  # set only for the unbounded shape

    @property
    def unbounded(self) -> bool:
        return self.rows_per_batch is not None

    def available(self, t: float) -> int:
        """Rows the source has produced by second `t` of the run (the integral of the rate)."""
        total = 0.0
        for start, end, r0, r1 in self.segments:
            if t <= start:
                break
            stop = min(t, end)
            span = stop - start
            slope = 0.0 if end == FOREVER else (r1 - r0) / (end - start)
            total += r0 * span + 0.5 * slope * span * span
        return int(total)

    def next_offset(self, start: int, t: float) -> int:
        if self.unbounded:
            return start + int(self.rows_per_batch or 0)
        return max(start, self.available(t))


def rate_law(rate: Mapping[str, Any], run_s: float) -> RateLaw:
    """Build the law from the scenario's `source.rate` (harness.scenario.rate, as a dict)."""
    shape = rate["shape"]
    if shape == "unbounded":
        return RateLaw((), rows_per_batch=int(rate["rows_per_batch"]))
    if shape == "constant":
        r = float(rate["rows_per_s"])
        return RateLaw(((0.0, FOREVER, r, r),))
    if shape == "steps":
        # Nothing is produced before the first step; each step holds until the next one.
        points = [(float(s["at_s"]), float(s["rows_per_s"])) for s in rate["steps"]]
        ends = [t for t, _ in points[1:]] + [FOREVER]
        return RateLaw(tuple((t, end, r, r) for (t, r), end in zip(points, ends, strict=True)))
    if shape == "ramp":
        r0, r1 = float(rate["from_rows_per_s"]), float(rate["to_rows_per_s"])
        ramp_s = float(rate.get("duration_s") or run_s)
        return RateLaw(((0.0, ramp_s, r0, r1), (ramp_s, FOREVER, r1, r1)))
    if shape == "spike":
        base, peak = float(rate["base_rows_per_s"]), float(rate["peak_rows_per_s"])
        at, dur = float(rate["at_s"]), float(rate["duration_s"])
        segments = (
            (0.0, at, base, base),
            (at, at + dur, peak, peak),
            (at + dur, FOREVER, base, base),
        )
        return RateLaw(tuple(seg for seg in segments if seg[1] > seg[0]))
    raise ValueError(f"source.rate.shape: unknown shape {shape!r}")
