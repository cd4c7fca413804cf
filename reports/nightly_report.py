"""render_nightly: a night's nightly.json -> nightly.html (self-contained trend page)."""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reports.plot_trend import trend_svg
from reports.svg import Chart, chart
from reports.tables import fmt
from reports.templating import render


@dataclass(frozen=True)
class TrendCard:
    chart: Chart
    status: str  # tonight's finding: regression | improvement | ok | short_history


@dataclass(frozen=True)
class SeriesCharts:
    series: str
    kind: str
    cards: list[TrendCard]


def _describe(finding: dict[str, Any]) -> str:
    """One line a person reads: what moved, by how much, against what."""
    change = finding.get("change")
    moved = "unbounded" if change is None else f"{abs(change) * 100:.0f}%"
    word = {"regression": "worse", "improvement": "better"}.get(finding["status"], "")
    z = finding.get("z")
    zs = "flat history" if z is None else f"robust z {z:+.1f}"
    return (
        f"{fmt(finding['value'])} vs median {fmt(finding.get('baseline'))} of "
        f"{finding['n_history']} nights: {moved} {word} ({zs})"
    )


def _caption(trend: dict[str, Any]) -> str:
    status = trend["status"]
    if status == "short_history":
        return (
            f"{trend['direction']} is better; {trend['n_history']} earlier night(s): too few "
            "to judge yet."
        )
    return f"{trend['direction']} is better; tonight {status}: {_describe(trend)}"


def _charts(trends: list[dict[str, Any]], kinds: dict[str, str]) -> list[SeriesCharts]:
    by_series: dict[str, list[TrendCard]] = {}
    for trend in trends:
        drawn = chart(
            trend["metric"],
            functools.partial(trend_svg, trend["points"], trend.get("baseline")),
            "No values recorded.",
            _caption(trend),
        )
        by_series.setdefault(trend["series"], []).append(TrendCard(drawn, trend["status"]))
    return [SeriesCharts(s, kinds.get(s, "scenario"), cs) for s, cs in by_series.items()]


def render_nightly(night_dir: Path) -> Path:
    """Write nightly.html next to nightly.json; return its path."""
    night_dir = Path(night_dir)
    data = json.loads((night_dir / "nightly.json").read_text())
    runs = data.get("runs", [])
    kinds = {r["series"]: r["kind"] for r in runs}
    for run in runs:
        report = Path(run["run_dir"] or "") / "report.html"
        run["link"] = os.path.relpath(report, night_dir) if run["run_dir"] else None
    failed = [r for r in runs if r["verdict"] != "valid"]
    code = data.get("exit_code", 2)
    # Exit 1 with every run valid is a performance regression, not a correctness one.
    status = {0: "valid", 1: "invalid" if failed else "regression"}.get(code, "unknown")
    context = {
        "data": data,
        "status": status,
        "headline": _headline(data, failed),
        "regressions": [(f, _describe(f)) for f in data.get("regressions", [])],
        "improvements": [
            (f, _describe(f)) for f in data.get("findings", []) if f["status"] == "improvement"
        ],
        "runs": runs,
        "failed": failed,
        "series": _charts(data.get("trends", []), kinds),
    }
    html = night_dir / "nightly.html"
    html.write_text(render("nightly.html", **context), encoding="utf-8")
    return html


def _headline(data: dict[str, Any], failed: list[dict]) -> str:
    regressions = data.get("regressions", [])
    parts = []
    if regressions:
        parts.append(f"{len(regressions)} regression(s)")
    if failed:
        parts.append(f"{len(failed)} run(s) not valid")
    short = sum(f["status"] == "short_history" for f in data.get("findings", []))
    if not parts:
        parts.append("no regression")
    if short:
        parts.append(f"{short} metric(s) with too short a history to judge")
    return "; ".join(parts)
