"""The run directory layout (DESIGN.md, "Run directory")."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from harness.runner.errors import RunError

if TYPE_CHECKING:
    from harness.scenario import Scenario


@dataclass(frozen=True)
class RunPaths:
    root: Path
    table: Path
    # Where the live table is while the run lasts, if not `table` (an object store's
    # location: harness/runner/table_store.py); `table` then holds its final copy.
    location: str | None = None

    @property
    def table_location(self) -> str:
        """What every process opens the live table by."""
        return self.location or str(self.table)

    @property
    def history(self) -> Path:
        return self.root / "history"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def checkpoint(self) -> Path:
        return self.root / "spark-checkpoint"

    @property
    def state(self) -> Path:
        return self.root / "state"

    @property
    def control(self) -> Path:
        return self.root / "control"

    @property
    def spark_events(self) -> Path:
        """Spark's event log, for its History Server (DESIGN.md keeps the run's logs here)."""
        return self.root / "spark-events"

    @property
    def result(self) -> Path:
        return self.root / "result.json"

    @property
    def scenario(self) -> Path:
        return self.root / "scenario.yaml"


def new_run_dir(out: Path, name: str, variant: str | None, table_path: str | None) -> RunPaths:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    base = f"{name}-{stamp}" + (f"-{variant}" if variant else "")
    root = out / base
    n = 1
    while root.exists():  # two runs within one second (compare's repetitions)
        n += 1
        root = out / f"{base}-{n}"
    paths = RunPaths(root=root, table=Path(table_path) if table_path else root / "table")
    for folder in (paths.history, paths.logs, paths.control, paths.state, paths.spark_events):
        folder.mkdir(parents=True, exist_ok=True)
    return paths


def new_run_paths(scenario: Scenario, out: Path, variant: str | None) -> RunPaths:
    """The run's directory, with the scenario as resolved in it."""
    try:
        paths = new_run_dir(out, scenario.name, variant, scenario.table.path)
        paths.scenario.write_text(scenario.to_yaml())
    except OSError as exc:
        raise RunError(f"{out}: cannot create a run directory there ({exc})") from None
    return paths


@dataclass
class RunOutcome:
    paths: RunPaths
    result: dict

    @property
    def verdict(self) -> str:
        return self.result["verdict"]
