"""report.html in a real headless browser, offline: the DOM shows the verdict and checks."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

from reports_rundirs import CHECK_NAMES

from reports import render_run

CHROMIUM = Path("/usr/bin/chromium")


def test_report_renders_in_headless_chromium(
    make_run: Callable[..., Path], tmp_path: Path, prerequisite
) -> None:
    prerequisite(
        CHROMIUM.exists(),
        "needs headless Chromium at /usr/bin/chromium (Debian: apt-get install -y chromium)",
    )
    html = render_run(make_run("async"))[0]
    # No network: every flag that makes Chromium phone home is off, so a page that needed a
    # CDN would render without it here too.
    out = subprocess.run(
        [
            str(CHROMIUM),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom",
            html.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    dom = out.stdout
    assert re.search(r'<span class="verdict v-invalid">invalid</span>', dom)
    for name in CHECK_NAMES:
        assert f'<td class="name">{name}</td>' in dom
    assert dom.count("<svg") == 5
