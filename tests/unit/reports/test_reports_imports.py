"""The one-way rule: reports read the run directory's files; they never load harness,
engine, infra or Spark code (DESIGN.md, issue 16 item 6)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPORTS = Path(__file__).resolve().parents[3] / "reports"
FORBIDDEN = ("harness", "engine", "infra", "pyspark")


def forbidden_imports(source: str) -> list[str]:
    """`import x` / `from x import y` (at any depth, also inside functions) of a forbidden
    top-level package; relative imports stay inside reports/."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [n for n in names if n.split(".")[0] in FORBIDDEN]
    return found


def test_no_module_in_reports_imports_harness_engine_infra_or_spark() -> None:
    modules = sorted(REPORTS.rglob("*.py"))
    assert modules
    offenders = {
        str(p.relative_to(REPORTS.parent)): bad
        for p in modules
        if (bad := forbidden_imports(p.read_text(encoding="utf-8")))
    }
    assert offenders == {}


def test_the_scan_finds_imports_in_every_form() -> None:
    source = (
        "import harness.history\n"
        "from engine import table\n"
        "def f():\n    from harness.metrics import timeseries\n"
        "import json, pyspark.sql as sql\n"
        "from . import svg\n"
    )
    assert sorted(forbidden_imports(source)) == [
        "engine",
        "harness.history",
        "harness.metrics",
        "pyspark.sql",
    ]


def test_importing_reports_loads_none_of_them() -> None:
    # A fresh interpreter: other tests in this process may have imported anything.
    code = (
        "import sys, reports, reports.nightly_report, reports.capacity_report\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
