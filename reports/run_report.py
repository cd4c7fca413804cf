"""render_run: one run directory -> report.html (self-contained) and report.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reports import plot_run
from reports.rundata import RunData, load_run
from reports.spark_tools import spark_tools
from reports.svg import Chart, chart
from reports.tables import (
    check_rows,
    environment_rows,
    fault_rows,
    fmt,
    key_metric_rows,
    metric_lists,
    metric_rows,
)
from reports.templating import render
from reports.timeline import Timeline, build_timeline

CAPTIONS = {
    "throughput": "Filled: rows made visible (committed) per second, each commit's rows spread "
    "over the time since the previous commit (at most one checkpoint interval). Dashed: rows "
    "the writer tasks wrote per second (ingest rate). Grey band: warm-up, excluded from the "
    "metrics. Red band: a fault window; dashed red line: an instantaneous fault.",
    "freshness": "Now minus the event time of the newest visible row, at the end of each second.",
    "blocked": "Milliseconds per second that writers (summed) waited for an instant or for "
    "earlier commits.",
    "pending": "Instants requested but not completed yet, sampled once a second.",
}


def _instants_caption(tl: Timeline) -> str:
    spans = tl.instants
    done = sum(s.outcome == "completed" for s in spans)
    rolled = sum(s.outcome == "rolled_back" for s in spans)
    return (
        f"{len(spans)} instants, {done} completed, {rolled} rolled back; at most "
        f"{plot_run.max_overlap(tl)} open at once (1: each waits for the previous one, as in "
        "blocking mode; more: async overlap)."
    )


def _charts(tl: Timeline, metrics: dict[str, Any]) -> list[tuple[str, Chart]]:
    freshness = metrics.get("freshness_s") or {}
    specs = [
        (
            "throughput",
            "Throughput over time",
            lambda: plot_run.throughput_svg(tl, metrics),
            "No buckets: the run ended before its first second.",
            CAPTIONS["throughput"],
        ),
        (
            "freshness",
            "Freshness",
            lambda: plot_run.freshness_svg(tl, freshness),
            "No commit, so nothing was visible to be fresh.",
            CAPTIONS["freshness"],
        ),
        (
            "blocked",
            "Writer blocked time",
            lambda: plot_run.blocked_svg(tl),
            "No buckets to chart.",
            CAPTIONS["blocked"],
        ),
        (
            "pending",
            "Pending instants",
            lambda: plot_run.pending_svg(tl),
            "history/series.jsonl has no pending_instants samples.",
            CAPTIONS["pending"],
        ),
        (
            "instants",
            "Instants: requested to completed",
            lambda: plot_run.instants_svg(tl),
            "No instant_created events.",
            _instants_caption(tl),
        ),
    ]
    return [(key, chart(title, draw, empty, cap)) for key, title, draw, empty, cap in specs]


def _context(run: RunData) -> dict[str, Any]:
    try:
        tl: Timeline | None = build_timeline(run)
        timeline_problem = None
    except Exception as exc:  # no run_start, or a history too damaged to bucket
        tl, timeline_problem = None, f"{type(exc).__name__}: {exc}"
    freshness = run.metrics.get("freshness_s")
    return {
        "run": run,
        "key_metrics": key_metric_rows(run),
        "timeline_problem": timeline_problem,
        "charts": _charts(tl, run.metrics) if tl else [],
        "freshness_quantiles": [(k, fmt(v)) for k, v in freshness.items()]
        if isinstance(freshness, dict)
        else [],
        "checks": check_rows(run),
        "faults": fault_rows(run),
        "metrics": metric_rows(run),
        "metric_lists": metric_lists(run),
        "scenario_yaml": run.scenario_yaml,
        "environment": environment_rows(run),
        "spark": spark_tools(run),
    }


def render_run(run_dir: Path) -> tuple[Path, Path]:
    """Write report.html and report.md into the run directory; return their paths."""
    run = load_run(Path(run_dir))
    context = _context(run)
    html, md = run.root / "report.html", run.root / "report.md"
    html.write_text(render("run.html", **context), encoding="utf-8")
    md.write_text(render("run.md", **context), encoding="utf-8")
    return html, md
