"""Read one run directory (result.json, history/, scenario.yaml) without ever raising.

A report is most needed when a run went wrong, so every missing or damaged file becomes a
line in `problems` (shown at the top of the report) instead of an exception.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# The run directory's files (docs/history.md). Reports read them directly, never through
# harness code: a report must render any run directory, also one the harness cannot load.
EVENTS_GLOB = "events-*.jsonl"
SERIES_FILE = "series.jsonl"
PER_SECOND_FILE = "per_second.jsonl"  # written by the analysis (harness/runner/per_second.py)


@dataclass(frozen=True)
class RunData:
    root: Path
    result: dict[str, Any]
    events: list[dict[str, Any]]
    series: list[dict[str, Any]]  # the runner's once-a-second samples (series.jsonl)
    per_second: list[dict[str, Any]]  # the metrics' per-second series (per_second.jsonl)
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


def _read_jsonl(path: Path, problems: list[str]) -> list[dict[str, Any]]:
    """The JSON objects of a JSON-lines file. A report shows what it can: an unreadable line
    is skipped and counted in `problems`, except a torn last line (a killed process)."""
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{path.parent.name}/{path.name} is unreadable: {exc}")
        return []
    rows, bad = [], 0
    for number, line in enumerate(lines, 1):
        if not line:
            continue
        try:
            row = json.loads(line)
        except ValueError:
            row = None
            if number == len(lines):  # no newline after it: torn mid-write
                continue
        if isinstance(row, dict):
            rows.append(row)
        else:
            bad += 1
    if bad:
        problems.append(f"{path.parent.name}/{path.name}: {bad} unreadable line(s) skipped.")
    return rows


def _has_time(event: dict[str, Any]) -> bool:
    t = event.get("t")
    return isinstance(t, int | float) and not isinstance(t, bool)


def _read_history(history: Path, problems: list[str]) -> tuple[list[dict], list[dict], list[dict]]:
    if not history.is_dir():
        problems.append("history/ is missing: no events or series to chart.")
        return [], [], []
    lines = [e for path in sorted(history.glob(EVENTS_GLOB)) for e in _read_jsonl(path, problems)]
    events = sorted((e for e in lines if _has_time(e)), key=lambda e: e["t"])
    if len(events) < len(lines):
        problems.append(f"history: {len(lines) - len(events)} event(s) without a time skipped.")
    series_path, per_second_path = history / SERIES_FILE, history / PER_SECOND_FILE
    series = _read_jsonl(series_path, problems) if series_path.exists() else []
    per_second = _read_jsonl(per_second_path, problems) if per_second_path.exists() else []
    return events, series, per_second


def load_run(run_dir: Path) -> RunData:
    root = Path(run_dir)
    problems: list[str] = []
    result = _read_result(root / "result.json", problems)
    events, series, per_second = _read_history(root / "history", problems)
    scenario_path = root / "scenario.yaml"
    scenario = scenario_path.read_text(encoding="utf-8") if scenario_path.exists() else None
    if events and not any(e.get("kind") == "run_start" for e in events):
        problems.append("history has no run_start event: time zero is unknown, no charts.")
    return RunData(root, result, events, series, per_second, scenario, problems)
