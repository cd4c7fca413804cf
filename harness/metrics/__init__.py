"""Metrics (DESIGN.md "Metrics"): pure functions from the run history to result.json values."""

from harness.metrics.compare import DIRECTIONS, compare, compare_runs, metric_at
from harness.metrics.compute import MetricParams, compute_metrics, timeseries
from harness.metrics.faults import RecoveryParams

__all__ = [
    "DIRECTIONS",
    "MetricParams",
    "RecoveryParams",
    "compare",
    "compare_runs",
    "compute_metrics",
    "metric_at",
    "timeseries",
]
