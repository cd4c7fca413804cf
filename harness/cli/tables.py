"""What the commands print: a run's summary and a comparison's tables, at full width."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape

from harness.cli.app import out

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.table import Table as RichTable


def print_comparison(
    tables: Sequence[Mapping[str, Any]],
    labels: Mapping[str, str],
    console: Console = out,
    level_pct: float = 95,
) -> None:
    """One table per pair of variants (compare.json's `tables`); `labels` name each variant
    as printed (with its system and Spark line); level_pct: the intervals' level."""
    for pair in tables:
        a, b = (labels.get(pair[side], pair[side]) for side in ("a", "b"))
        print_whole(console, comparison_table([a, b], pair["rows"], level_pct))


def print_whole(console: Console, grid: RenderableType) -> None:
    """A table at its natural width even on a narrower terminal (which then wraps the
    lines): rich would otherwise shorten a metric's name to fit, fold a number into two
    lines (0.003 over 7) or drop columns."""
    from rich.measure import Measurement
    from rich.segment import Segments

    unbounded = console.options.update(max_width=10_000)
    width = max(console.width, Measurement.get(console, unbounded, grid).maximum)
    lines = console.render(grid, console.options.update_width(width))
    console.print(Segments(lines), soft_wrap=True)  # soft_wrap: the lines are not cropped


def comparison_table(variants: list[str], table: list[dict], level_pct: float = 95) -> RichTable:
    from rich import box
    from rich.table import Table as RichTable

    from reports.tables import delta_with_interval, fmt

    grid = RichTable(
        title=f"A = {variants[0]}, B = {variants[1]} (medians of the runs)",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    # The metric and its delta with the interval are the answer: never wrapped.
    grid.add_column("metric", no_wrap=True)
    grid.add_column("A", justify="right", min_width=6)
    grid.add_column("B", justify="right", min_width=6)
    grid.add_column(f"delta % [{level_pct:g}% interval]", no_wrap=True)
    grid.add_column("q (BH)", justify="right", min_width=5)
    grid.add_column("verdict", no_wrap=True)
    for row in table:
        grid.add_row(
            row["metric"],
            fmt(row.get("a")),
            fmt(row.get("b")),
            delta_with_interval(row),
            "-" if row.get("q_value") is None else f"{row['q_value']:.2g}",
            str(row.get("verdict")),
        )
    return grid


def print_summary(root: Path, result: dict, console: Console) -> None:
    colour = {"valid": "green", "invalid": "red"}.get(result["verdict"], "yellow")
    console.print(f"[bold]{escape(str(root))}[/bold]: [{colour}]{result['verdict']}[/{colour}]")
    for name, check in result.get("checks", {}).items():
        console.print(f"  {name}: {check.get('verdict')}", markup=False)
    if result.get("error"):
        console.print(f"  error: {result['error']}", markup=False)
    mode = result.get("environment", {}).get("instant_mode", {})
    if mode.get("effective") != mode.get("requested"):
        console.print(
            f"  instant mode: {mode.get('requested')} asked, ran {mode.get('effective')} "
            "(COW upserts need blocking: safety.cow_upsert_blocking)"
        )
    restarts = result.get("metrics", {}).get("driver_restarts") or {}
    if restarts.get("count"):
        console.print(
            f"  driver restarts: {restarts['count']} (exit codes {restarts['exit_codes']}; "
            "logs/driver-N.log)"
        )
    tp = result.get("metrics", {}).get("throughput_rows_per_s")
    if isinstance(tp, dict) and tp.get("mean") is not None:
        cv = tp.get("cv")
        cv_text = "n/a" if cv is None else f"{cv:.3g}"
        console.print(f"  throughput: mean {tp['mean']:,.0f} rows/s, cv {cv_text}")
