"""report.html and compare.html in a real headless browser, offline: the DOM shows the
verdict and checks, and a screenshot of each page can be taken.

The README's pictures come from here: `INSTANTBENCH_SCREENSHOTS=docs/images` writes
run-report.png and compare-report.png into that directory (otherwise into a temporary
one, so CI leaves the repository alone); `INSTANTBENCH_SCREENSHOTS_FROM=DIR` takes a real
comparison's output directory (compare.json, runs/) instead of the synthetic runs."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path

from reports_chromium import (
    CHROMIUM,
    MISSING,
    WINDOW,
    copy_run_for_report,
    dump_dom,
    png_size,
    screenshot,
)
from reports_rundirs import CHECK_NAMES
from test_reports_compare import runs, tables_of

from reports import render_comparison, render_run

SCREENSHOTS = "INSTANTBENCH_SCREENSHOTS"
SCREENSHOTS_FROM = "INSTANTBENCH_SCREENSHOTS_FROM"


def test_report_renders_in_headless_chromium(
    make_run: Callable[..., Path], tmp_path: Path, prerequisite
) -> None:
    prerequisite(CHROMIUM.exists(), MISSING)
    html = render_run(make_run("async"))[0]
    dom = dump_dom(html, tmp_path / "profile")
    assert re.search(r'<span class="verdict v-invalid">invalid</span>', dom)
    for name in CHECK_NAMES:
        assert f'<td class="name">{name}</td>' in dom
    assert dom.count("<svg") == 5


def _pages(make_run: Callable[..., Path], tmp_path: Path) -> tuple[Path, Path]:
    """A run report and a comparison report, rendered by the current code."""
    source = os.environ.get(SCREENSHOTS_FROM)
    if source:
        saved = json.loads((Path(source) / "compare.json").read_text())
        by_variant = {
            variant: [copy_run_for_report(Path(d), tmp_path / "runs") for d in dirs]
            for variant, dirs in saved["runs"].items()
        }
        tables = saved["tables"]
    else:
        by_variant = runs(make_run)
        tables = tables_of(by_variant)
    for dirs in by_variant.values():
        for run_dir in dirs:
            render_run(run_dir)
    first_b = list(by_variant.values())[-1][0]
    compare = render_comparison(by_variant, tmp_path / "compare", tables)
    return first_b / "report.html", compare


def test_reports_can_be_screenshot_in_headless_chromium(
    make_run: Callable[..., Path], tmp_path: Path, prerequisite
) -> None:
    prerequisite(CHROMIUM.exists(), MISSING)
    target = os.environ.get(SCREENSHOTS)
    images = Path(target) if target else tmp_path / "images"
    run_page, compare_page = _pages(make_run, tmp_path)
    for page, name in ((run_page, "run-report.png"), (compare_page, "compare-report.png")):
        png = screenshot(page, images / name, tmp_path / "profile")
        assert png_size(png) == WINDOW
        # a blank white window compresses to a few kB; a drawn report is far larger
        assert png.stat().st_size > 40_000, f"{png}: {png.stat().st_size} bytes, blank?"
