"""Headless Chromium, offline: a page's DOM or a PNG screenshot of it.

Every flag that makes Chromium phone home is off, so a page that needed a CDN would
render without it here too. A uniquely named module (not conftest.py), like
reports_rundirs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
MISSING = "needs headless Chromium at /usr/bin/chromium (Debian: apt-get install -y chromium)"
# The README's pictures: a laptop-wide window, tall enough for the verdict, checks and charts.
WINDOW = (1280, 1600)
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _chromium(profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={profile}",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )


def dump_dom(page: Path, profile: Path) -> str:
    return _chromium(profile, "--dump-dom", page.as_uri()).stdout


def screenshot(page: Path, png: Path, profile: Path) -> Path:
    """A PNG of the page's top WINDOW pixels."""
    png.parent.mkdir(parents=True, exist_ok=True)
    png.unlink(missing_ok=True)
    width, height = WINDOW
    _chromium(
        profile,
        "--hide-scrollbars",
        f"--window-size={width},{height}",
        f"--screenshot={png}",
        page.as_uri(),
    )
    return png


def png_size(png: Path) -> tuple[int, int]:
    """Width and height from the PNG's IHDR chunk."""
    head = png.read_bytes()[:24]
    assert head[:8] == PNG_MAGIC, f"{png}: not a PNG"
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def copy_run_for_report(run_dir: Path, into: Path) -> Path:
    """The files a report reads (result.json, scenario.yaml, history/), without the table:
    re-rendering a real run's report with the current code leaves the original alone."""
    copy = into / run_dir.name
    copy.mkdir(parents=True)
    shutil.copytree(run_dir / "history", copy / "history")
    for name in ("result.json", "scenario.yaml"):
        if (run_dir / name).exists():
            shutil.copy2(run_dir / name, copy / name)
    return copy
