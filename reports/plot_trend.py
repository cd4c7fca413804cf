"""Small trend charts for the nightly page: one metric of one series over the last nights."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from matplotlib.figure import Figure

from reports.svg import to_svg

STATUS_COLOUR = {"regression": "#c62828", "improvement": "#1b7f3b"}


def trend_svg(points: Sequence[dict[str, Any]], baseline: float | None) -> str | None:
    """`points`: [{night_id, ts, value, valid, status}], oldest first; the last is tonight.

    Nights are evenly spaced (an axis of dates would squeeze a week of skipped nights into
    a gap nobody needs to see); red = regression, green = improvement, hollow = the night
    was not valid (not part of any baseline), ringed = tonight.
    """
    pts = [p for p in points if p.get("value") is not None]
    if not pts:
        return None
    fig = Figure(figsize=(3.6, 1.7))
    ax = fig.subplots()
    fig.subplots_adjust(left=0.2, right=0.97, bottom=0.2, top=0.95)
    xs = list(range(len(pts)))
    ys = [p["value"] for p in pts]
    ax.plot(xs, ys, color="#1f77b4", lw=1, zorder=1)
    for x, p in zip(xs, pts, strict=True):
        colour = STATUS_COLOUR.get(p.get("status") or "", "#1f77b4")
        hollow = not p.get("valid", True)
        ax.scatter(
            [x],
            [p["value"]],
            s=22 if colour == "#1f77b4" else 40,
            facecolors="white" if hollow else colour,
            edgecolors=colour,
            zorder=2,
        )
    ax.scatter([xs[-1]], [ys[-1]], s=110, facecolors="none", edgecolors="#1d2330", zorder=3)
    if baseline is not None:
        ax.axhline(baseline, color="#5d6675", ls="--", lw=0.8)
    ax.set_xticks([0, xs[-1]] if len(xs) > 1 else [0])
    ax.set_xticklabels([_day(pts[0]), "tonight"] if len(xs) > 1 else ["tonight"])
    ax.tick_params(labelsize=7)
    ax.set_ylim(bottom=min(0.0, min(ys)))
    return to_svg(fig)


def _day(point: dict[str, Any]) -> str:
    ts = point.get("ts") or ""
    return ts[:10] if ts else str(point.get("night_id", ""))
