"""Fixtures: synthetic run directories (builders in reports_rundirs.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from reports_rundirs import (
    DURATION,
    SCENARIO_YAML,
    WARMUP,
    event,
    history,
    result,
    series,
    write_history,
)


@pytest.fixture
def make_run(tmp_path: Path) -> Callable[..., Path]:
    """A complete run directory of the given instant mode."""

    def make(mode: str = "async", name: str | None = None) -> Path:
        root = tmp_path / (name or f"blocking-vs-async-20231114T220000-{mode}")
        events = history(mode)
        samples = series(events)
        write_history(root / "history", events, samples)
        (root / "scenario.yaml").write_text(SCENARIO_YAML)
        (root / "result.json").write_text(json.dumps(result(mode, events, samples)))
        return root

    return make


@pytest.fixture
def failed_run(tmp_path: Path) -> Path:
    """A run whose driver died at once: only run_start and run_end, verdict unknown."""
    root = tmp_path / "smoke-20231114T220000"
    events = [
        event(
            0.0,
            "run_start",
            "runner",
            run_id="r-failed",
            scenario="smoke",
            warmup_s=WARMUP,
            duration_s=DURATION,
        ),
        event(1.5, "run_end", "runner", status="error", error="driver exited with code 1"),
    ]
    write_history(root / "history", events, [])
    (root / "result.json").write_text(
        json.dumps(
            {
                "scenario": "smoke",
                "run_id": "r-failed",
                "variant": None,
                "verdict": "unknown",
                "error": "driver exited with code 1: java.net.BindException",
                "checks": {},
                "metrics": {"error": "ValueError: no commits"},
                "faults": [],
                "environment": {},
            }
        )
    )
    return root
