"""The fault x system matrix (reports/matrix_report.py) from a night's run directories."""

import json
from pathlib import Path

import yaml

from reports.matrix_report import matrix_cells, render_matrix

CRASH = [{"kind": "coordinator_crash", "at_s": 8, "point": "after_commit"}]


def _run(night: Path, name: str, system: str, faults: list, verdict: str, writers: int = 0) -> dict:
    run_dir = night / "runs" / name
    run_dir.mkdir(parents=True)
    scenario = {
        "name": name,
        "system": {"kind": system, "version": None},
        "source": {"mode": "bank" if writers else "append"},
        "batch_writers": {"count": writers, "op": "transfer"},
        "faults": faults,
    }
    (run_dir / "scenario.yaml").write_text(yaml.safe_dump(scenario))
    checks = {"exactly_once": {"verdict": verdict}, "timeline": {"verdict": "valid"}}
    metrics = {"throughput_rows_per_s": {"mean": 1999.5, "cv": 0.12}, "freshness_s": {"p99": 4.2}}
    result = {
        "verdict": verdict,
        "checks": checks,
        "metrics": metrics,
        "environment": {"system": {"kind": system, "version": "4.4.0"}},
    }
    (run_dir / "result.json").write_text(json.dumps(result))
    return {"series": name, "verdict": verdict, "run_dir": str(run_dir)}


def test_each_run_lands_in_its_fault_row_and_system_column_with_its_figures(tmp_path: Path) -> None:
    night = tmp_path / "nights" / "n1"
    runs = [
        _run(night, "delta-crash", "delta", CRASH, "valid"),
        _run(night, "iceberg-crash", "iceberg", CRASH, "invalid"),
        _run(night, "delta-clean", "delta", [], "valid"),
        _run(night, "iceberg-occ", "iceberg", CRASH, "valid", writers=2),
        {"series": "benchmarks", "verdict": "valid", "run_dir": None},
    ]
    (night / "nightly.json").write_text(json.dumps({"runs": runs}))
    cells = matrix_cells(night)
    assert set(cells) == {
        ("append: coordinator_crash@after_commit", "delta"),
        ("append: coordinator_crash@after_commit", "iceberg"),
        ("append: no fault", "delta"),
        # batch writers beside the stream: a row of their own
        ("bank + 2 batch writers (transfer): coordinator_crash@after_commit", "iceberg"),
    }
    (broken,) = cells[("append: coordinator_crash@after_commit", "iceberg")]
    assert broken.verdict == "invalid" and broken.failed_checks == ("exactly_once",)
    assert broken.link == "runs/iceberg-crash/report.html"
    assert (
        dict(broken.figures)["rows/s"] == 1999.5 and dict(broken.figures)["commit p99 ms"] is None
    )

    html, md = render_matrix(night)
    table = md.read_text()
    assert "| fault | delta | iceberg |" in table  # only the systems the night ran
    (row,) = [line for line in table.splitlines() if line.startswith("| append: coordinator_crash")]
    assert "[invalid](runs/iceberg-crash/report.html) (exactly_once)" in row
    assert "[valid](runs/delta-crash/report.html)" in row
    assert table.index("| append: no fault") < table.index("| append: coordinator_crash")
    assert 'href="runs/iceberg-crash/report.html"' in html.read_text()
