"""Fixed-width time buckets over the measured part of the run (1 s by default)."""

from dataclasses import dataclass

import numpy as np

from harness.metrics.history import RunWindow


@dataclass(frozen=True)
class Buckets:
    starts: np.ndarray  # bucket start times, seconds since run start
    width: float

    @classmethod
    def over(cls, window: RunWindow, width: float = 1.0) -> "Buckets":
        n = int(np.floor((window.end_s - window.warmup_s) / width + 1e-9))
        return cls(starts=window.warmup_s + width * np.arange(max(n, 0)), width=width)

    def __len__(self) -> int:
        return len(self.starts)

    @property
    def ends(self) -> np.ndarray:
        return self.starts + self.width

    def index(self, rel_t: np.ndarray) -> np.ndarray:
        """The bucket of each time, -1 outside the measured window."""
        if len(self) == 0:
            return np.full(len(rel_t), -1)
        k = np.floor((np.asarray(rel_t, float) - self.starts[0]) / self.width).astype(int)
        return np.where((k >= 0) & (k < len(self)), k, -1)

    def total(self, rel_t: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Sum of `values` per bucket by the time each happened."""
        k = self.index(rel_t)
        keep = k >= 0
        return np.bincount(k[keep], weights=np.asarray(values, float)[keep], minlength=len(self))

    def overlap(
        self, begins: np.ndarray, ends: np.ndarray, weights: np.ndarray | None = None
    ) -> np.ndarray:
        """Seconds of the intervals [begin, end) that fall in each bucket, summed (each
        interval's seconds times its weight, when weights are given: a rate spread over it).

        F(x) = weighted interval time before x = sum over begun intervals of w (x - begin)
        minus sum over ended ones of w (x - end); evaluated at the bucket edges with sorted
        cumulative sums, so it is O((intervals + buckets) log intervals), not intervals x buckets.
        """
        edges = np.append(self.starts, self.ends[-1:]) if len(self) else np.empty(0)
        w = np.ones(len(begins)) if weights is None else np.asarray(weights, float)

        def covered_before(points: np.ndarray) -> np.ndarray:
            order = np.argsort(np.asarray(points, float), kind="stable")
            sorted_points, sorted_w = np.asarray(points, float)[order], w[order]
            cum_w = np.concatenate([[0.0], np.cumsum(sorted_w)])
            cum_wp = np.concatenate([[0.0], np.cumsum(sorted_w * sorted_points)])
            n = np.searchsorted(sorted_points, edges, side="right")
            return cum_w[n] * edges - cum_wp[n]

        f = covered_before(begins) - covered_before(ends)
        return np.diff(f)
