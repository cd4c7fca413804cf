"""matplotlib figures as inline <svg> elements that need nothing from the network."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import matplotlib
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.typing import RcKeyType

# Applied only while a chart is drawn (see chart()), so the process-wide matplotlib settings
# of whoever imports reports stay untouched. Text stays <text> (searchable, small) rather
# than glyph paths; hashsalt makes ids stable so two renders of one run are identical.
STYLE: dict[RcKeyType, Any] = {
    "svg.fonttype": "none",
    "svg.hashsalt": "instantbench",
    "font.family": "sans-serif",
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
}

WIDTH_IN = 10.0

# Inline SVG in HTML5 needs neither the XML prolog nor namespace declarations; dropping
# them (and matplotlib's RDF metadata) leaves no http:// URI anywhere in the page.
_STRIP = [
    re.compile(r"<\?xml[^>]*\?>\s*"),
    re.compile(r"<!DOCTYPE[^>]*>\s*", re.S),
    re.compile(r"<metadata>.*?</metadata>\s*", re.S),
    re.compile(r'\s+xmlns(:\w+)?="[^"]*"'),
]


def new_figure(height_in: float = 2.8) -> tuple[Figure, Axes]:
    """A full-width figure whose plot area starts at the same x in every chart, so the time
    axes of stacked charts line up (a fitted layout would shift them by label width).

    A bare Figure, not pyplot: no GUI backend, no global figure registry to leak or to
    share between threads.
    """
    fig = Figure(figsize=(WIDTH_IN, height_in))
    ax = fig.subplots()
    fig.subplots_adjust(
        left=0.8 / WIDTH_IN,
        right=1 - 0.15 / WIDTH_IN,
        bottom=0.5 / height_in,
        top=1 - 0.12 / height_in,
    )
    return fig, ax


def warmup_span(ax: Axes, warmup_s: float) -> None:
    """Warm-up in neutral grey, distinct from the red of fault windows."""
    ax.axvspan(0, warmup_s, color="#9e9e9e", alpha=0.15, lw=0)


def to_svg(fig: Figure) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    svg = buf.getvalue()
    for pattern in _STRIP:
        svg = pattern.sub("", svg)
    # Scale with the page instead of the fixed pt size matplotlib writes.
    return re.sub(r'<svg width="[^"]*" height="[^"]*"', '<svg width="100%"', svg, count=1)


@dataclass(frozen=True)
class Chart:
    title: str
    svg: str | None  # None: `message` says why there is no chart
    message: str | None = None
    caption: str = ""


def chart(title: str, draw: Callable[[], str | None], empty: str, caption: str = "") -> Chart:
    """Run one chart's drawing; a chart that cannot be drawn becomes a message.

    Reports are read most after runs that went wrong, with odd or partial histories; one
    chart failing on them must not cost the reader the verdict and the other charts.
    """
    try:
        with matplotlib.rc_context(STYLE):
            svg = draw()
    except Exception as exc:
        return Chart(title, None, f"chart unavailable: {type(exc).__name__}: {exc}", caption)
    return Chart(title, svg, None if svg else empty, caption)
