"""Capacity curves: SLO metrics against the offered rate (one line per writer count and
checkpoint interval), and OCC contention against the number of concurrent batch writers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from matplotlib.axes import Axes

from reports.plot_compare import PALETTE
from reports.svg import new_figure, to_svg

FAIL = "#c62828"


def _configs(points: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    by: dict[str, list[dict[str, Any]]] = {}
    for p in sorted(points, key=lambda p: p["rate"]):
        by.setdefault(f"{p['writers']} writer(s), checkpoint {p['interval_s']:g} s", []).append(p)
    return by


def _rate_curves(
    points: list[dict[str, Any]],
    key: str,
    ylabel: str,
    reference: Callable[[Axes, list[float]], None] | None = None,
) -> str | None:
    """Filled markers: the point holds the SLO; red crosses: it does not."""
    drawn = [p for p in points if p.get(key) is not None]
    if not drawn:
        return None
    fig, ax = new_figure(3.0)
    for i, (label, pts) in enumerate(_configs(drawn).items()):
        colour = PALETTE[i % len(PALETTE)]
        ax.plot(
            [p["rate"] for p in pts],
            [p[key] for p in pts],
            color=colour,
            lw=1.2,
            marker="o",
            label=label,
        )
        bad = [p for p in pts if not p["holds"]]
        ax.scatter(
            [p["rate"] for p in bad], [p[key] for p in bad], marker="x", s=80, color=FAIL, zorder=3
        )
    if reference is not None:
        reference(ax, sorted({p["rate"] for p in drawn}))
    ax.set_xlabel("offered rate (rows/s, open loop); red x: SLO not held")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=8, loc="upper left")
    return to_svg(fig)


def freshness_svg(points: list[dict[str, Any]], slo_s: float | None) -> str | None:
    def slo_line(ax: Axes, rates: list[float]) -> None:
        if slo_s is not None:
            ax.axhline(slo_s, color=FAIL, ls="--", lw=1)
            ax.annotate(
                f"SLO {slo_s:g} s",
                (rates[0], slo_s),
                fontsize=8,
                color=FAIL,
                xytext=(0, 3),
                textcoords="offset points",
            )
        ax.set_ylim(bottom=0)

    return _rate_curves(points, "freshness_p99_s", "freshness p99 (s)", slo_line)


def backlog_svg(points: list[dict[str, Any]], growth: float) -> str | None:
    def limit(ax: Axes, rates: list[float]) -> None:
        ax.plot(
            rates,
            [growth * r for r in rates],
            color=FAIL,
            ls="--",
            lw=1,
            label=f"limit: {growth:.0%} of the rate",
        )
        ax.axhline(0, color="#5d6675", lw=0.6)

    return _rate_curves(points, "backlog_slope", "backlog slope (rows/s per s)", limit)


def throughput_svg(points: list[dict[str, Any]]) -> str | None:
    def diagonal(ax: Axes, rates: list[float]) -> None:
        ax.plot(rates, rates, color="#5d6675", ls=":", lw=1)
        ax.set_ylim(bottom=0)

    return _rate_curves(points, "throughput_mean", "committed rows/s (dotted: offered)", diagonal)


def contention_svg(stages: list[dict[str, Any]]) -> str | None:
    """Conflict rate (bars, left axis) and commit latency p50/p99 (lines, right axis)."""
    stages = [s for s in stages if s.get("attempts")]
    if not stages:
        return None
    fig, ax = new_figure(3.0)
    fig.subplots_adjust(right=1 - 0.8 / 10)
    users = [s["users"] for s in stages]
    xs = list(range(len(stages)))
    ax.bar(
        xs,
        [100 * s["conflict_rate"] for s in stages],
        color="#ff7f0e",
        alpha=0.6,
        width=0.5,
        label="conflict rate",
    )
    ax.set_xticks(xs)
    ax.set_xticklabels([str(u) for u in users])
    ax.set_xlabel("concurrent batch writers (Locust users)")
    ax.set_ylabel("conflicts (% of commit attempts)")
    ax.set_ylim(0, 100)
    right = ax.twinx()
    for q, style in (("p50", "-"), ("p99", "--")):
        right.plot(
            xs,
            [s["latency_ms"][q] for s in stages],
            color="#1f77b4",
            ls=style,
            marker="o",
            label=f"commit latency {q}",
        )
    right.set_ylabel("commit latency (ms)")
    right.set_ylim(bottom=0)
    right.grid(False)
    handles = ax.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
    ax.legend(handles=handles, fontsize=8, loc="upper left")
    return to_svg(fig)
