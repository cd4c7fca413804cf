"""The fault x system matrix of a night (issue 34): one row per fault set, one column per
system under test, each cell the run's verdict with a link to its report and the
performance figures beside it. Read from the night's run directories only (nightly.json,
each run's result.json and resolved scenario.yaml), written as matrix.html and matrix.md
beside nightly.json."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from reports.templating import render

SYSTEMS = ("instantbench", "hudi", "delta", "iceberg")  # the columns' order
# The figures beside each verdict (result.json metrics, dotted), as the cell shows them.
FIGURES = (
    ("throughput_rows_per_s.mean", "rows/s"),
    ("throughput_rows_per_s.cv", "CV"),
    ("freshness_s.p99", "fresh p99 s"),
    ("commit_latency_ms.p99", "commit p99 ms"),
)


@dataclass(frozen=True)
class Cell:
    verdict: str
    link: str | None
    figures: tuple[tuple[str, float | None], ...]
    version: str | None
    failed_checks: tuple[str, ...]


def fault_label(scenario: Mapping[str, Any]) -> str:
    """A row's name: the source's mode and its batch writers, then the faults' kinds and
    points in order."""
    faults = scenario.get("faults", [])
    parts = [f"{f['kind']}@{f['point']}" if f.get("point") else str(f["kind"]) for f in faults]
    shape = str(scenario.get("source", {}).get("mode", "append"))
    writers = scenario.get("batch_writers") or {}
    if writers.get("count"):
        shape += f" + {writers['count']} batch writers ({writers.get('op', 'upsert')})"
    return f"{shape}: {' + '.join(parts) or 'no fault'}"


def _metric(metrics: Mapping[str, Any], dotted: str) -> float | None:
    value: Any = metrics
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return float(value) if isinstance(value, int | float) else None


def _cell(result: Mapping[str, Any], link: str | None) -> Cell:
    metrics = result.get("metrics", {})
    checks = result.get("checks", {})
    return Cell(
        verdict=str(result.get("verdict", "unknown")),
        link=link,
        figures=tuple((label, _metric(metrics, name)) for name, label in FIGURES),
        version=result.get("environment", {}).get("system", {}).get("version"),
        failed_checks=tuple(n for n, c in checks.items() if c.get("verdict") != "valid"),
    )


def matrix_cells(night_dir: Path) -> dict[tuple[str, str], list[Cell]]:
    """(fault label, system kind) -> the cells of the runs there (repeats: several)."""
    data = json.loads((night_dir / "nightly.json").read_text())
    cells: dict[tuple[str, str], list[Cell]] = {}
    for run in data.get("runs", []):
        if not run.get("run_dir"):
            continue  # a benchmark entry, or a run that never started
        run_dir = Path(run["run_dir"])
        result = json.loads((run_dir / "result.json").read_text())
        scenario = yaml.safe_load((run_dir / "scenario.yaml").read_text())  # as resolved
        system = scenario.get("system", {}).get("kind", "instantbench")
        key = (fault_label(scenario), system)
        link = os.path.relpath(run_dir / "report.html", night_dir)
        cells.setdefault(key, []).append(_cell(result, link))
    return cells


def systems_of(night_dir: Path) -> set[str]:
    """The systems under test the night's runs wrote through."""
    return {system for _, system in matrix_cells(Path(night_dir))}


def render_matrix(night_dir: Path) -> tuple[Path, Path]:
    """Write matrix.html and matrix.md next to nightly.json; return both paths."""
    night_dir = Path(night_dir)
    cells = matrix_cells(night_dir)
    faults = sorted(
        {fault for fault, _ in cells}, key=lambda f: (f.split(": ")[0], "no fault" not in f, f)
    )
    systems = [s for s in SYSTEMS if any(k == s for _, k in cells)]
    context = {"night": night_dir.name, "faults": faults, "systems": systems, "cells": cells}
    html, md = night_dir / "matrix.html", night_dir / "matrix.md"
    html.write_text(render("matrix.html", **context), encoding="utf-8")
    md.write_text(render("matrix.md", **context), encoding="utf-8")
    return html, md
