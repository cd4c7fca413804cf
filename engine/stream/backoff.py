"""Exponential backoff with full jitter inside one fixed deadline."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator


def backoff_delays(
    deadline: float, base_s: float = 0.05, cap_s: float = 1.0, rng: random.Random | None = None
) -> Iterator[float]:
    """Yield sleeps (base, 2*base, ... capped, each jittered) until ``deadline`` (monotonic).

    Jitter keeps many writers that polled together from polling together again.
    """
    rng = rng or random.Random()
    step = base_s
    while (remaining := deadline - time.monotonic()) > 0:
        yield min(remaining, rng.uniform(base_s, step))
        step = min(cap_s, step * 2)
