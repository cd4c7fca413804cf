"""Read one run directory (result.json, history/, scenario.yaml) without ever raising.

A report is most needed when a run went wrong, so every missing or damaged file becomes a
line in `problems` (shown at the top of the report) instead of an exception.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.history import read_events, read_series


@dataclass(frozen=True)
class RunData:
    root: Path
    result: dict[str, Any]
    events: list[dict[str, Any]]
    series: list[dict[str, Any]]
    scenario_yaml: str | None
    problems: list[str] = field(default_factory=list)

    @property
    def run_start(self) -> dict[str, Any] | None:
        return next((e for e in self.events if e.get("kind") == "run_start"), None)

    @property
    def name(self) -> str:
        start = self.run_start or {}
        return str(self.result.get("scenario") or start.get("scenario") or self.root.name)

    @property
    def instant_mode_forced(self) -> bool:
        """The coordinator ran another instant mode than the scenario asked for."""
        mode = self.result.get("environment", {}).get("instant_mode") or {}
        return mode.get("effective", mode.get("requested")) != mode.get("requested")

    @property
    def run_id(self) -> str:
        start = self.run_start or {}
        return str(self.result.get("run_id") or start.get("run_id") or self.root.name)

    @property
    def variant(self) -> str | None:
        return self.result.get("variant")

    @property
    def verdict(self) -> str:
        # Fail closed like the CLI: anything but a known verdict reads as unknown.
        verdict = self.result.get("verdict")
        return verdict if verdict in ("valid", "invalid", "unknown") else "unknown"

    @property
    def error(self) -> str | None:
        return self.result.get("error") or None

    @property
    def metrics(self) -> dict[str, Any]:
        metrics = self.result.get("metrics")
        return metrics if isinstance(metrics, dict) else {}


def _read_result(path: Path, problems: list[str]) -> dict[str, Any]:
    if not path.exists():
        problems.append("result.json is missing: the run did not finish its analysis.")
        return {}
    try:
        result = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        problems.append(f"result.json is unreadable: {exc}")
        return {}
    if not isinstance(result, dict):
        problems.append("result.json is not a JSON object.")
        return {}
    return result


def _read_history(history: Path, problems: list[str]) -> tuple[list[dict], list[dict]]:
    if not history.is_dir():
        problems.append("history/ is missing: no events or series to chart.")
        return [], []
    try:
        events = read_events(history)
    except (OSError, ValueError, KeyError, TypeError) as exc:  # an event without `t`
        problems.append(f"history events are unreadable: {type(exc).__name__}: {exc}")
        events = []
    try:
        series = read_series(history)
    except (OSError, ValueError) as exc:  # a torn last line of series.jsonl
        problems.append(f"history/series.jsonl is unreadable: {exc}")
        series = []
    return events, series


def load_run(run_dir: Path) -> RunData:
    root = Path(run_dir)
    problems: list[str] = []
    result = _read_result(root / "result.json", problems)
    events, series = _read_history(root / "history", problems)
    scenario_path = root / "scenario.yaml"
    scenario = scenario_path.read_text(encoding="utf-8") if scenario_path.exists() else None
    if events and not any(e.get("kind") == "run_start" for e in events):
        problems.append("history has no run_start event: time zero is unknown, no charts.")
    return RunData(root, result, events, series, scenario, problems)
