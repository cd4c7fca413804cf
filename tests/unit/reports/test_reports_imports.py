"""The one-way rule: reports reads result files; it never loads the runner, Spark or engine."""

from __future__ import annotations

import subprocess
import sys


def test_importing_reports_loads_no_runner_spark_or_engine() -> None:
    # A fresh interpreter: other tests in this process may have imported anything.
    code = (
        "import sys, reports\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('pyspark', 'engine')"
        " or m.startswith('harness.runner')]\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
