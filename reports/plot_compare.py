"""Charts that overlay the runs of two (or more) variants: is one smoother than the other?"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib.lines import Line2D

from reports.svg import WIDTH_IN, new_figure, to_svg, warmup_span
from reports.timeline import Timeline

PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2"]


def colours(variants: list[str]) -> dict[str, str]:
    return {v: PALETTE[i % len(PALETTE)] for i, v in enumerate(variants)}


def _overlay(by_variant: dict[str, list[Timeline]], column: str, ylabel: str) -> str | None:
    """One line per run, coloured by variant, with one legend entry per variant."""
    if not any(tl.per_second[column].size for tls in by_variant.values() for tl in tls):
        return None
    colour = colours(list(by_variant))
    fig, ax = new_figure(3.2)
    warmup = 0.0
    for variant, tls in by_variant.items():
        for tl in tls:
            frame = tl.per_second
            ax.step(
                frame["start_s"],
                frame[column],
                where="post",
                color=colour[variant],
                lw=1,
                alpha=0.75,
            )
            warmup = max(warmup, tl.warmup_s)
    # Runs of one scenario share the warm-up; shade the longest so no warm-up looks measured.
    warmup_span(ax, warmup)
    handles = [
        Line2D([], [], color=colour[v], label=f"{v} ({len(tls)} runs)")
        for v, tls in by_variant.items()
    ]
    ax.legend(handles=handles, loc="lower right", fontsize=8)
    ax.set_xlabel("seconds since run start (grey: warm-up)")
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    ax.set_xlim(left=0)
    return to_svg(fig)


def throughput_overlay_svg(by_variant: dict[str, list[Timeline]]) -> str | None:
    return _overlay(by_variant, "rows_per_s", "rows made visible / s")


def blocked_overlay_svg(by_variant: dict[str, list[Timeline]]) -> str | None:
    return _overlay(by_variant, "blocked_ms_per_s", "writer blocked ms / s")


def throughput_box_svg(by_variant: dict[str, list[Timeline]]) -> str | None:
    """Per-second throughput of the measured seconds of all runs of a variant, pooled."""
    samples = {
        v: [x for tl in tls for x in tl.measured["rows_per_s"] if np.isfinite(x)]
        for v, tls in by_variant.items()
    }
    samples = {v: xs for v, xs in samples.items() if xs}
    if not samples:
        return None
    colour = colours(list(by_variant))
    fig, ax = new_figure(0.9 + 0.6 * len(samples))
    box = ax.boxplot(
        list(samples.values()),
        orientation="horizontal",
        widths=0.6,
        patch_artist=True,
        tick_labels=list(samples),
        whis=(1, 99),
    )
    for patch, variant in zip(box["boxes"], samples, strict=True):
        patch.set(facecolor=colour[variant], alpha=0.45)
    ax.invert_yaxis()
    ax.set_xlabel("rows made visible per second (measured seconds; whiskers p1-p99)")
    ax.set_xlim(left=0)
    return to_svg(fig)


VERDICT_COLOURS = {"better": "#2ca02c", "worse": "#d62728", "same": "#7f7f7f"}


def deltas_svg(table: Sequence[Mapping[str, Any]]) -> str | None:
    """delta% of B against A with its interval, one line per metric, coloured by verdict;
    metrics without a relative interval (A of 0, one pair) are left out."""
    rows = [
        r
        for r in table
        if r.get("delta_pct") is not None and None not in (r.get("ci_pct") or [None])
    ]
    if not rows:
        return None
    fig, ax = new_figure(0.6 + 0.28 * len(rows))
    fig.subplots_adjust(left=2.4 / WIDTH_IN)  # room for the metric names
    y = np.arange(len(rows))
    for i, r in enumerate(rows):
        low, high = r["ci_pct"]
        colour = VERDICT_COLOURS.get(str(r.get("verdict")), VERDICT_COLOURS["same"])
        ax.plot([low, high], [i, i], color=colour, lw=2.5, solid_capstyle="butt")
        ax.plot([r["delta_pct"]], [i], "o", color=colour, ms=4)
    for edge in (-5.0, 5.0):
        ax.axvline(edge, color="#999", ls=":", lw=1)
    ax.axvline(0.0, color="#333", lw=1)
    ax.set_yticks(y, [str(r.get("metric")) for r in rows], fontsize=7.5)
    ax.invert_yaxis()
    ax.grid(axis="y", visible=False)
    ax.set_xlabel("delta % of B against A (95% interval; dotted: the ±5% a verdict needs)")
    return to_svg(fig)
