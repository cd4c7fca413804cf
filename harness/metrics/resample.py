"""Circular block bootstrap of a run's seconds, and statistics over resampled samples.

A resample draws whole blocks of consecutive seconds (wrapping around at the end), so
the autocorrelation inside a block survives: a commit's hiccup that slows three seconds
in a row is drawn as three slow seconds, not as three independent bad draws. A resample
is kept as counts (how often each second was drawn); a sample's weight is the count of
its second, so per-event samples follow their seconds.
"""

from collections.abc import Callable

import numpy as np

from harness.metrics.samples import Samples


def block_length(n_seconds: int) -> int:
    """n^(1/3) seconds, rounded up (the usual rate for a block bootstrap), at least 2."""
    return max(2, int(np.ceil(n_seconds ** (1 / 3))))


def block_counts(
    n_seconds: int, resamples: int, rng: np.random.Generator, block: int | None = None
) -> np.ndarray:
    """(resamples, n_seconds) counts of a circular block bootstrap of n_seconds seconds."""
    if n_seconds == 0:
        return np.zeros((resamples, 0), int)
    block = min(block or block_length(n_seconds), n_seconds)
    n_blocks = -(-n_seconds // block)
    starts = rng.integers(0, n_seconds, size=(resamples, n_blocks))
    drawn = (starts[:, :, None] + np.arange(block)) % n_seconds
    drawn = drawn.reshape(resamples, -1)[:, :n_seconds]
    flat = drawn + n_seconds * np.arange(resamples)[:, None]
    return np.bincount(flat.ravel(), minlength=resamples * n_seconds).reshape(resamples, n_seconds)


class Weighted:
    """Sorted sample values with one row of frequency weights per resample.

    With all weights 1 each statistic equals numpy's on the plain values (np.percentile's
    linear interpolation, the population standard deviation), so a run's own value and
    result.json agree.
    """

    def __init__(self, samples: Samples, counts: np.ndarray) -> None:
        order = np.argsort(samples.values, kind="stable")
        self.values = samples.values[order]
        self.weights = counts[:, samples.second[order]].astype(float)
        self.total = self.weights.sum(axis=1)

    def mean(self) -> np.ndarray:
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.weights @ self.values / self.total

    def std(self) -> np.ndarray:
        centred = self.values[None, :] - self.mean()[:, None]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.sqrt((self.weights * centred**2).sum(axis=1) / self.total)

    def quantile(self, q: float) -> np.ndarray:
        """The q-quantile of the values repeated by their weights (linear interpolation)."""
        if len(self.values) == 0:
            return np.full(len(self.total), np.nan)
        cum = np.cumsum(self.weights, axis=1)
        h = (self.total - 1) * q
        lo, hi = np.floor(h), np.ceil(h)
        # Position k of the repeated, sorted values holds values[number of cum <= k].
        last = len(self.values) - 1
        at_lo = np.minimum((cum <= lo[:, None]).sum(axis=1), last)
        at_hi = np.minimum((cum <= hi[:, None]).sum(axis=1), last)
        out = self.values[at_lo] + (h - lo) * (self.values[at_hi] - self.values[at_lo])
        return np.where(self.total > 0, out, np.nan)

    def below(self, threshold: np.ndarray) -> np.ndarray:
        """Weighted count of values < threshold (one threshold per resample)."""
        return (self.weights * (self.values[None, :] < threshold[:, None])).sum(axis=1)


def _ratio(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(b != 0, a / np.where(b != 0, b, 1.0), np.nan)


# The statistics a compared metric can take of its samples, one value per resample.
STATISTICS: dict[str, Callable[[Weighted], np.ndarray]] = {
    "mean": Weighted.mean,
    "p5": lambda w: w.quantile(0.05),
    "p50": lambda w: w.quantile(0.50),
    "p99": lambda w: w.quantile(0.99),
    "cv": lambda w: _ratio(w.std(), w.mean()),
    "floor_ratio": lambda w: _ratio(w.quantile(0.05), w.quantile(0.50)),
    "jitter": lambda w: _ratio(w.quantile(0.99), w.quantile(0.50)),
    # Seconds below 10% of the median: stalls.total_s with 1 s buckets.
    "stall_s": lambda w: np.where(w.total > 0, w.below(0.1 * w.quantile(0.5)), np.nan),
}
