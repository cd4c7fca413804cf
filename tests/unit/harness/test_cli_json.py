"""`run --json` and `compare --json`: the result document on stdout and nothing else there
(issue 16, item 5). The runner is replaced by fakes: no Spark."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import harness.jobs.compare
import harness.runner.run
import reports
from harness.cli import app
from harness.jobs.compare import Comparison, PairTable

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"


@dataclass
class _Paths:
    root: Path


@dataclass
class _Outcome:
    paths: _Paths
    result: dict[str, Any]

    @property
    def verdict(self) -> str:
        return self.result["verdict"]


def _result(variant: str | None) -> dict[str, Any]:
    return {"scenario": "x", "run_id": f"x-{variant}", "variant": variant, "verdict": "valid"}


@pytest.fixture
def fake_runs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    def run_scenario(scenario, out, variant=None, quiet=False):
        print("progress noise")  # anything a run prints must not reach --json's stdout
        return _Outcome(_Paths(tmp_path / f"run-{variant}"), _result(variant))

    def run_comparison(scenario, out, repeat, quiet, on_run=None):
        out_dir = tmp_path / "cmp"
        out_dir.mkdir()
        doc = {"scenario": "x", "variants": ["a", "b"], "table": [{"metric": "m"}]}
        (out_dir / "compare.json").write_text(json.dumps(doc, indent=2))
        runs = {v: [_Outcome(_Paths(tmp_path / v), _result(v))] for v in ("a", "b")}
        tables = [PairTable(a="a", b="b", rows=doc["table"])]
        return Comparison(out_dir, ["a", "b"], runs, tables)  # type: ignore[arg-type]

    monkeypatch.setattr(harness.runner.run, "run_scenario", run_scenario)
    monkeypatch.setattr(harness.jobs.compare, "run_comparison", run_comparison)
    monkeypatch.setattr(reports, "render_run", lambda root: (root / "r.html", root / "r.md"))
    monkeypatch.setattr(reports, "render_comparison", lambda *a: tmp_path / "cmp" / "c.html")
    return tmp_path


def test_run_json_prints_one_result_document_per_variant(fake_runs: Path) -> None:
    scenario = SCENARIOS / "blocking-vs-async.yaml"  # a matrix of two variants
    known = ["--set", "source.rate.ceiling_rows_per_s=30000"]  # no ceiling to measure
    result = CliRunner().invoke(
        app, ["run", str(scenario), "--json", "--out", str(fake_runs), *known]
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    docs = [json.loads(line) for line in lines]  # every stdout line is a document
    assert [d["variant"] for d in docs] == ["instant-mode-blocking", "instant-mode-async"]
    assert "valid" in result.stderr  # the human summary moved to stderr


def test_without_json_the_summary_is_on_stdout(fake_runs: Path) -> None:
    result = CliRunner().invoke(app, ["run", str(SCENARIOS / "smoke.yaml")])
    assert result.exit_code == 0 and "run-None" in result.stdout


def test_compare_json_prints_compare_json(fake_runs: Path) -> None:
    scenario = SCENARIOS / "blocking-vs-async.yaml"
    result = CliRunner().invoke(app, ["compare", str(scenario), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == json.loads((fake_runs / "cmp" / "compare.json").read_text())
