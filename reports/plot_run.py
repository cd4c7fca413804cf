"""The charts of one run. All share the time axis (seconds since run start) and shading."""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from reports.svg import new_figure, to_svg, warmup_span
from reports.timeline import Timeline

FAULT_COLOUR = "#d62728"
NOT_APPLIED_COLOUR = "#9e9e9e"
OUTCOME_COLOURS = {"completed": "#1f77b4", "inflight": "#bbbbbb", "rolled_back": FAULT_COLOUR}


def shade(ax: Axes, tl: Timeline, labels: bool = False) -> None:
    """Warm-up grey, fault windows red, instantaneous faults as dashed red lines."""
    warmup_span(ax, tl.warmup_s)
    if labels and tl.warmup_s > 0:
        ax.text(
            tl.warmup_s / 2,
            0.97,
            "warm-up",
            transform=ax.get_xaxis_transform(),
            ha="center",
            va="top",
            fontsize=8,
            color="#555",
        )
    for i, f in enumerate(tl.faults):
        colour = FAULT_COLOUR if f.applied else NOT_APPLIED_COLOUR
        if f.is_window and f.end_s is not None:
            ax.axvspan(f.start_s, f.end_s, color=colour, alpha=0.15, lw=0)
        else:
            ax.axvline(f.start_s, color=colour, ls="--", lw=1.2)
        if labels:
            text = f.label if f.applied else f"{f.label} (not applied)"
            # Alternate heights so labels of faults close in time do not overprint.
            y = 0.97 - 0.12 * (i % 3)
            ax.text(
                f.start_s,
                y,
                " " + text,
                transform=ax.get_xaxis_transform(),
                ha="left",
                va="top",
                fontsize=7.5,
                color=colour,
                bbox={"fc": "white", "ec": "none", "alpha": 0.7, "pad": 0.5},
            )
    ax.set_xlim(0, max(tl.end_s, 1.0))
    ax.set_xlabel("seconds since run start")


def _step(ax: Axes, x: np.ndarray, y: np.ndarray, colour: str) -> None:
    # Per-second buckets drawn as steps: one path, small even for hour-long runs.
    edges = np.append(x, x[-1] + 1.0) if len(x) else x
    values = np.append(y, y[-1]) if len(y) else y
    ax.fill_between(edges, values, step="post", color=colour, alpha=0.35, lw=0)
    ax.step(edges, values, where="post", color=colour, lw=1)


def throughput_svg(tl: Timeline, metrics: dict[str, Any]) -> str | None:
    frame = tl.per_second
    if frame.empty:
        return None
    fig, ax = new_figure(3.2)
    _step(ax, frame["start_s"].to_numpy(), frame["rows_per_s"].to_numpy(), "#1f77b4")
    top = float(np.nanmax(frame["rows_per_s"], initial=1.0))
    if "ingest_rows_per_s" in frame and frame["ingest_rows_per_s"].any():
        # What the writers wrote, beside what became visible: a gap between them is data
        # written but not committed yet.
        ingest = frame["ingest_rows_per_s"].to_numpy()
        edges = np.append(frame["start_s"].to_numpy(), frame["start_s"].iloc[-1] + 1.0)
        ax.step(
            edges,
            np.append(ingest, ingest[-1]),
            where="post",
            color="#8c564b",
            lw=1,
            ls="--",
            label="written by the writers",
        )
        top = max(top, float(np.nanmax(ingest, initial=1.0)))
    p50 = (metrics.get("throughput_rows_per_s") or {}).get("p50")
    if p50:
        ax.axhline(p50, color="#333", ls=":", lw=1, label=f"p50 visible (measured) {p50:,.0f}")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="lower right", fontsize=8)
    ax.set_ylabel("rows / s")
    ax.set_ylim(bottom=0, top=top * 1.3)
    shade(ax, tl, labels=True)
    return to_svg(fig)


def freshness_svg(tl: Timeline, quantiles: dict[str, Any]) -> str | None:
    frame = tl.per_second
    if frame.empty or frame["freshness_s"].isna().all():
        return None
    fig, ax = new_figure()
    ax.plot(frame["start_s"] + 1.0, frame["freshness_s"], color="#2ca02c", lw=1.2)
    styles = {"mean": ":", "p99": "--", "max": "-."}
    for name, style in styles.items():
        value = quantiles.get(name)
        if value is not None:
            ax.axhline(value, color="#555", ls=style, lw=1, label=f"{name} {value:.2f} s")
    if any(quantiles.get(n) is not None for n in styles):
        ax.legend(loc="upper right", fontsize=8)
    ax.set_ylabel("freshness (s)")
    ax.set_ylim(bottom=0)
    shade(ax, tl)
    return to_svg(fig)


def blocked_svg(tl: Timeline) -> str | None:
    frame = tl.per_second
    if frame.empty:
        return None
    fig, ax = new_figure()
    _step(ax, frame["start_s"].to_numpy(), frame["blocked_ms_per_s"].to_numpy(), "#ff7f0e")
    ax.set_ylabel("writer blocked ms / s")
    # An all-zero series (async mode) still gets a readable ms scale, not 0..0.05.
    ax.set_ylim(0, max(float(frame["blocked_ms_per_s"].max()) * 1.15, 100.0))
    shade(ax, tl)
    return to_svg(fig)


def pending_svg(tl: Timeline) -> str | None:
    if tl.pending.empty:
        return None
    fig, ax = new_figure(2.4)
    ax.step(
        tl.pending["elapsed_s"],
        tl.pending["pending_instants"],
        where="post",
        color="#9467bd",
        lw=1.2,
    )
    ax.set_ylabel("pending instants")
    ax.set_ylim(bottom=0)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    shade(ax, tl)
    return to_svg(fig)


def instants_svg(tl: Timeline) -> str | None:
    """One bar per instant, requested -> completed, in order of request.

    Async mode shows as bars that overlap in time; blocking mode as a staircase.
    """
    spans = tl.instants
    if not spans:
        return None
    fig, ax = new_figure(min(max(2.4, 0.14 * len(spans) + 1.0), 9.0))
    y = np.arange(len(spans))
    starts = np.array([s.requested_s for s in spans])
    ends = np.array([s.ended_s if s.ended_s is not None else tl.end_s for s in spans])
    ax.barh(
        y,
        np.maximum(ends - starts, 0.05),
        left=starts,
        height=0.7,
        color=[OUTCOME_COLOURS[s.outcome] for s in spans],
    )
    ax.invert_yaxis()
    ax.set_ylabel("instant (in request order)")
    if len(spans) <= 30:
        ax.set_yticks(y, [s.instant for s in spans], fontsize=6.5)
    ax.grid(axis="y", visible=False)
    shade(ax, tl)
    handles = [Patch(color=c, label=o.replace("_", " ")) for o, c in OUTCOME_COLOURS.items()]
    ax.legend(handles=handles, loc="upper right", fontsize=8, ncols=3)
    return to_svg(fig)


def max_overlap(tl: Timeline) -> int:
    """Most instants open at once: 1 in blocking mode, more when async overlaps commits."""
    points = [(s.requested_s, 1) for s in tl.instants] + [
        (s.ended_s if s.ended_s is not None else np.inf, -1) for s in tl.instants
    ]
    open_now = peak = 0
    for _, step in sorted(points, key=lambda p: (p[0], p[1])):  # closes before opens on ties
        open_now += step
        peak = max(peak, open_now)
    return peak
