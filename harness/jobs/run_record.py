"""One line of a night: a run, a benchmark or a comparison's decisions, as the results
store keeps it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.checks.verdict import EXIT_ERROR, EXIT_INVALID, EXIT_VALID, exit_code
from harness.jobs.store import flatten
from harness.runner.rundir import RunOutcome


@dataclass
class RunRecord:
    series: str
    kind: str  # scenario | benchmark | decision (a comparison's headline decisions)
    run_id: str
    verdict: str
    run_dir: str | None = None
    variant: str | None = None
    overrides: list[str] = field(default_factory=list)
    repeat: int = 0
    error: str | None = None
    metrics: dict[str, float] = field(default_factory=dict)  # flattened, dotted names
    environment: dict[str, Any] = field(default_factory=dict)
    expect: str | None = None  # the verdict the suite entry expects; None: valid
    missed: str | None = None  # why the run missed its expectation

    @property
    def exit_code(self) -> int:
        code = exit_code(self.verdict)
        if self.expect is None or code == EXIT_ERROR:  # unknown or an error: closed either way
            return code
        return EXIT_INVALID if self.missed else EXIT_VALID

    def finished(self, outcome: RunOutcome, missed: str | None = None) -> RunRecord:
        """The record of a run that finished (whatever its verdict)."""
        result = outcome.result
        self.run_id, self.run_dir = result["run_id"], str(outcome.paths.root)
        self.verdict, self.error = result["verdict"], result.get("error")
        self.missed = missed
        self.metrics = flatten(result.get("metrics") or {})
        self.environment = result.get("environment") or {}
        return self
