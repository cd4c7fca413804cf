"""Render run directories into self-contained HTML and Markdown (reads result files only)."""

from reports.compare_report import render_comparison
from reports.run_report import render_run

__all__ = ["render_comparison", "render_run"]
