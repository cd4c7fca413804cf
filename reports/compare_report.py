"""render_comparison: the runs of each variant -> compare.html (self-contained) and compare.md."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reports import plot_compare
from reports.rundata import RunData, load_run
from reports.svg import Chart, chart
from reports.tables import delta_with_interval, fmt
from reports.templating import render
from reports.timeline import Timeline, build_timeline

# Accepted spellings of each column: compare_runs() keys first, then the column titles.
COLUMNS = {
    "metric": ("metric", "name"),
    "a": ("a", "A"),
    "b": ("b", "B"),
    "q_value": ("q_value", "q", "p_value", "p"),
    "verdict": ("verdict",),
}


@dataclass(frozen=True)
class Row:
    metric: str
    a: str
    b: str
    delta: str  # delta% with its interval (reports.tables.delta_with_interval)
    q_value: str  # the bootstrap p-value adjusted across metrics (Benjamini-Hochberg)
    verdict: str


def _row(raw: Mapping[str, Any]) -> Row:
    def pick(column: str) -> Any:
        return next((raw[k] for k in COLUMNS[column] if k in raw), None)

    q = pick("q_value")
    return Row(
        metric=str(pick("metric") or "?"),
        a=fmt(pick("a")),
        b=fmt(pick("b")),
        delta=delta_with_interval({**raw, "a": pick("a")}),
        q_value="-" if q is None else f"{float(q):.3g}",
        verdict=str(pick("verdict") or "same"),
    )


@dataclass(frozen=True)
class RunEntry:
    run: RunData
    link: str  # relative path from the comparison page to the run's report.html


@dataclass(frozen=True)
class PairView:
    """One pair's table: B against A."""

    a: str
    b: str
    rows: list[Row]
    deltas: Chart

    def named(self, verdict: str) -> list[str]:
        return [r.metric for r in self.rows if r.verdict == verdict]

    @property
    def same(self) -> int:
        return sum(r.verdict == "same" for r in self.rows)


def _pair_view(pair: Mapping[str, Any]) -> PairView:
    table = list(pair.get("rows") or [])
    return PairView(
        a=str(pair["a"]),
        b=str(pair["b"]),
        rows=[_row(r) for r in table],
        deltas=chart(
            f"delta% of {pair['b']} against {pair['a']} with its interval, every metric",
            lambda: plot_compare.deltas_svg(table),
            "No metric has an interval (one pair of runs, or none).",
            "Green: better, red: worse, grey: the same (the interval reaches zero, the "
            "change is under 5%, or it does not survive the false-discovery control).",
        ),
    )


def _timelines(runs: list[RunData]) -> list[Timeline]:
    timelines = []
    for run in runs:
        try:
            timelines.append(build_timeline(run))
        except Exception:  # a run without a usable history: listed, just not charted
            continue
    return timelines


def render_comparison(
    run_dirs_by_variant: dict[str, list[Path]],
    out_dir: Path,
    tables: Sequence[Mapping[str, Any]],
    spark_lines: dict[str, str | None] | None = None,
) -> Path:
    """Write compare.html and compare.md into out_dir; return the HTML path.

    `tables`: compare.json's, one per pair of variants ({a, b, rows}: B against A, as in
    compare_variants). `spark_lines`: the system and Spark line each variant ran on.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = {v: [load_run(Path(d)) for d in dirs] for v, dirs in run_dirs_by_variant.items()}
    timelines = {v: _timelines(rs) for v, rs in runs.items()}
    variants = list(runs)
    context = {
        "variants": variants,
        "lines": [(v, (spark_lines or {}).get(v)) for v in variants],
        "pairs": [_pair_view(pair) for pair in tables],
        "colours": plot_compare.colours(variants),
        "runs": {
            v: [RunEntry(r, os.path.relpath(r.root / "report.html", out_dir)) for r in rs]
            for v, rs in runs.items()
        },
        "suspect": [r for rs in runs.values() for r in rs if r.verdict != "valid"],
        "forced": [r for rs in runs.values() for r in rs if r.instant_mode_forced],
        "charts": _charts(timelines),
        **_statistics(out_dir),
    }
    html = out_dir / "compare.html"
    html.write_text(render("compare.html", **context), encoding="utf-8")
    (out_dir / "compare.md").write_text(render("compare.md", **context), encoding="utf-8")
    return html


def _statistics(out_dir: Path) -> dict[str, Any]:
    """How the comparison was tested, and its headline conclusions, from its compare.json
    (a fixed 95% design when there is none)."""
    try:
        document = json.loads((out_dir / "compare.json").read_text())
    except (OSError, ValueError):
        document = {}
    stats = {"alpha": 0.05, "level_pct": 95, "looks_planned": 1, "stopped": None}
    stats.update(document.get("statistics") or {})
    return {"stats": stats, "conclusions": document.get("conclusions") or []}


def _charts(timelines: dict[str, list[Timeline]]) -> list[Chart]:
    """The charts over every run: throughput and blocked time."""
    return [
        chart(
            "Throughput over time, every run",
            lambda: plot_compare.throughput_overlay_svg(timelines),
            "No run has a usable history.",
            "Rows made visible per second; one line per run, coloured by variant.",
        ),
        chart(
            "Distribution of per-second throughput",
            lambda: plot_compare.throughput_box_svg(timelines),
            "No measured seconds in any run.",
            "All measured seconds of all runs of a variant. A smoother variant has a "
            "narrower box and a higher left whisker (fewer near-empty seconds).",
        ),
        chart(
            "Writer blocked time, every run",
            lambda: plot_compare.blocked_overlay_svg(timelines),
            "No run has a usable history.",
            "Milliseconds per second that writers waited for an instant or a commit.",
        ),
    ]
