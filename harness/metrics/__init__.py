"""Metrics (DESIGN.md "Metrics"): pure functions from the run history to result.json values."""

from harness.metrics.compare import (
    COMPARED,
    DIRECTIONS,
    CompareParams,
    compare_runs,
    compare_variants,
    metric_at,
)
from harness.metrics.compute import MetricParams, compute_metrics, timeseries
from harness.metrics.faults import RecoveryParams
from harness.metrics.samples import RunSamples, run_samples

__all__ = [
    "COMPARED",
    "DIRECTIONS",
    "CompareParams",
    "MetricParams",
    "RecoveryParams",
    "RunSamples",
    "compare_runs",
    "compare_variants",
    "compute_metrics",
    "metric_at",
    "run_samples",
    "timeseries",
]
