"""Small statistics helpers that return JSON-safe values (None instead of NaN or inf)."""

import math
from collections.abc import Iterable, Sequence

import numpy as np


def num(value: float | None) -> float | None:
    """A plain float, or None when the value is missing or not finite."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def clean(values: Iterable[float]) -> np.ndarray:
    """The finite values as a float array (events lacking a field carry NaN)."""
    array = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, float)
    return array[np.isfinite(array)]


def percentiles(values: Iterable[float], names: Sequence[str]) -> dict[str, float | None]:
    """{"p50": ..., "p99": ..., "max": ..., "mean": ...} for the requested names; None if empty."""
    array = clean(values)
    out: dict[str, float | None] = {}
    for name in names:
        if array.size == 0:
            out[name] = None
        elif name == "max":
            out[name] = num(array.max())
        elif name == "mean":
            out[name] = num(array.mean())
        else:
            out[name] = num(np.percentile(array, float(name[1:])))
    return out


def ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or denominator is None or denominator == 0:
        return None
    return num(numerator / denominator)
