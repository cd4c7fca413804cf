"""render_run on hand-made run directories: content, self-containment, robustness."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from reports_rundirs import CHECK_NAMES, SKEW_LABEL, T0

from reports import render_run
from reports.plot_run import max_overlap
from reports.rundata import load_run
from reports.svg import chart
from reports.timeline import build_timeline

CHART_IDS = ["throughput", "freshness", "blocked", "pending", "instants"]
# Anything a browser would fetch: src/href to another host, CSS url() other than an in-page
# #fragment (SVG hatch patterns use those), @import.
FETCHES = re.compile(r"""(src|href)\s*=\s*["']?\s*(https?:)?//|url\(\s*["']?(?!#)|@import""", re.I)


def section(html: str, section_id: str) -> str:
    start = html.index(f'id="{section_id}"')
    return html[start : html.index("</section>", start)]


def test_html_shows_verdict_checks_fault_label_and_one_svg_per_chart(
    make_run: Callable[..., Path],
) -> None:
    html_path, md_path = render_run(make_run("async"))
    assert (html_path.name, md_path.name) == ("report.html", "report.md")
    html = html_path.read_text()
    header = html[: html.index("</header>")]
    assert '<span class="verdict v-invalid">invalid</span>' in header
    for fact in ("blocking-vs-async", "variant: async", "r-async"):
        assert fact in header
    for name in CHECK_NAMES:
        assert name in section(html, "checks")
    assert SKEW_LABEL in section(html, "throughput"), "the fault is labelled on the chart"
    assert SKEW_LABEL in section(html, "faults")
    for chart_id in CHART_IDS:
        assert section(html, chart_id).count("<svg") == 1, chart_id
    assert "<details>" in section(html, "checks")  # evidence is collapsible
    assert "throughput_rows_per_s.floor_ratio" in section(html, "metrics")
    assert "warmup_s: 5" in section(html, "scenario")
    assert "pyspark" in section(html, "environment")


def test_html_needs_no_network(make_run: Callable[..., Path]) -> None:
    html = render_run(make_run("blocking"))[0].read_text()
    assert "http://" not in html and "https://" not in html
    assert not FETCHES.search(html)
    assert "<script" not in html and "<link" not in html


def test_markdown_has_the_same_facts(make_run: Callable[..., Path]) -> None:
    md = render_run(make_run("async"))[1].read_text()
    assert "**Verdict: INVALID**" in md
    for name in CHECK_NAMES:
        assert re.search(rf"^\| {name} \| (VALID|INVALID) \|", md, re.M), name
    assert "requested time not after its predecessor" in md  # short evidence
    assert "| throughput_rows_per_s.p50 | 20,000 |" in md
    assert SKEW_LABEL in md and "writer_crash(writer:1)@26s" in md


def test_instant_chart_data_shows_async_overlap(make_run: Callable[..., Path]) -> None:
    blocking = build_timeline(load_run(make_run("blocking")))
    overlapping = build_timeline(load_run(make_run("async")))
    assert max_overlap(blocking) == 1
    assert max_overlap(overlapping) > 1
    outcomes = {s.outcome for s in blocking.instants}
    assert outcomes == {"completed", "rolled_back"}


def test_timeline_includes_warmup_and_spreads_blocked_time(make_run: Callable[..., Path]) -> None:
    run = load_run(make_run("blocking"))
    tl = build_timeline(run)
    assert tl.per_second["start_s"].iloc[0] == 0 and tl.warmup_s == 5
    assert tl.measured["start_s"].iloc[0] == 5
    blocked_total = sum(
        e["blocked_ms"] for e in run.events if e["kind"] == "instant_request" and e["t"] < T0 + 35
    )
    assert tl.per_second["blocked_ms_per_s"].sum() == pytest.approx(blocked_total)


def test_failed_run_renders_with_a_clear_message(failed_run: Path) -> None:
    html_path, md_path = render_run(failed_run)
    html, md = html_path.read_text(), md_path.read_text()
    assert '<span class="verdict v-unknown">unknown</span>' in html[: html.index("</header>")]
    banner = html[html.index('id="error"') :]
    assert "driver exited with code 1: java.net.BindException" in banner[: banner.index("</div>")]
    assert "No checks ran" in html
    assert "**Verdict: UNKNOWN**" in md and "The run failed" in md


def test_empty_run_directory_renders(tmp_path: Path) -> None:
    html = render_run(tmp_path)[0].read_text()
    assert "result.json is missing" in html and "history/ is missing" in html
    assert "v-unknown" in html


def test_damaged_files_become_warnings(make_run: Callable[..., Path]) -> None:
    root = make_run("async")
    (root / "result.json").write_text("{not json")
    with open(root / "history" / "series.jsonl", "a") as f:
        f.write('{"t": 1700000035.0, "pending_in\n{"t": 1700000036.0}\n')  # a damaged line
    with open(root / "history" / "events-runner-1.jsonl", "a") as f:
        f.write('{"t": 1700000036.0, "ki')  # a torn last line: its writer was killed
    html = render_run(root)[0].read_text()
    assert "result.json is unreadable" in html
    assert "series.jsonl: 1 unreadable line(s) skipped" in html
    assert "events-runner-1.jsonl" not in html  # a torn last line is no damage
    assert section(html, "throughput").count("<svg") == 1  # the history still charts
    assert section(html, "pending").count("<svg") == 1  # and so do the readable samples


def test_history_without_run_start_has_no_charts_but_renders(failed_run: Path) -> None:
    for path in (failed_run / "history").glob("events-*.jsonl"):
        lines = [ln for ln in path.read_text().splitlines() if "run_start" not in ln]
        path.write_text("\n".join(lines) + "\n")
    html = render_run(failed_run)[0].read_text()
    assert "no run_start event" in html
    assert "<svg" not in html


def test_a_failing_chart_becomes_a_message() -> None:
    def broken() -> str:
        raise KeyError("rows_per_s")

    drawn = chart("Throughput", broken, "empty")
    assert drawn.svg is None and "KeyError" in (drawn.message or "")


def test_evidence_is_escaped(make_run: Callable[..., Path]) -> None:
    root = make_run("async")
    result = json.loads((root / "result.json").read_text())
    result["checks"]["timeline"]["note"] = "<script>alert(1)</script>"
    (root / "result.json").write_text(json.dumps(result))
    html = render_run(root)[0].read_text()
    assert "<script>alert" not in html and "&lt;script&gt;" in html
