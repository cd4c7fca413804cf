"""render_capacity: capacity.json -> capacity.html (self-contained: curves, recommendation)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from reports import plot_capacity
from reports.svg import chart
from reports.templating import render


def render_capacity(capacity_dir: Path) -> Path:
    """Write capacity.html next to capacity.json; return its path."""
    capacity_dir = Path(capacity_dir)
    data = json.loads((capacity_dir / "capacity.json").read_text())
    points = data.get("points", [])
    for p in points:
        p["link"] = (
            os.path.relpath(Path(p["run_dir"]) / "report.html", capacity_dir)
            if p.get("run_dir")
            else None
        )
    slo = data.get("slo", {})
    stages = (data.get("contention") or {}).get("stages", [])
    context = {
        "data": data,
        "points": points,
        "stages": stages,
        "status": {0: "valid", 1: "invalid"}.get(data.get("exit_code", 2), "unknown"),
        "rate_charts": [
            chart(
                "Freshness p99 against the offered rate",
                lambda: plot_capacity.freshness_svg(points, slo.get("freshness_p99_s")),
                "No run measured freshness.",
                "Each line is one writer count and checkpoint interval; rates above the first "
                "that failed were not run.",
            ),
            chart(
                "Backlog growth against the offered rate",
                lambda: plot_capacity.backlog_svg(points, slo.get("backlog_growth", 0.02)),
                "No run measured the backlog.",
                "Least-squares slope of (offered - committed) rows; above the dashed line the "
                "pipeline falls further behind every second.",
            ),
            chart(
                "Committed throughput against the offered rate",
                lambda: plot_capacity.throughput_svg(points),
                "No run measured throughput.",
                "On the dotted diagonal the pipeline commits what it is offered.",
            ),
        ],
        "contention_chart": chart(
            "OCC contention: batch writers committing at once",
            lambda: plot_capacity.contention_svg(stages),
            data.get("contention_error") or "The contention measurement was not run.",
            "Locust users, each a batch writer committing upserts through the engine's "
            "transactions against one table; a failure is a write conflict (rolled back, "
            "not retried).",
        ),
    }
    html = capacity_dir / "capacity.html"
    html.write_text(render("capacity.html", **context), encoding="utf-8")
    return html
