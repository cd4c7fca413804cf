"""Every registered check (check_inputs.CHECKS, so a check added later is covered too) is
never `valid` on a run that left no evidence: an empty table, no history events, no Spark
checkpoint. Then the same checks on a table with rows and the run's evidence are `valid`,
so the first assertion is about the evidence, not a check that cannot say valid at all."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from bank_opening import commit_opening_balances

from engine.config import TableConfig
from engine.table import Table
from harness.checks import fingerprint
from harness.pipeline.events import SCHEMA, EventSpec, opening_balances
from harness.runner.check_inputs import CHECKS, run_checks
from harness.runner.final_state import read_final_state
from harness.runner.rundir import RunPaths
from harness.scenario import load_scenario

BANK = Path(__file__).resolve().parents[3] / "scenarios" / "bank.yaml"
ACCOUNTS = 4


def _scenario():
    # Bank mode: every check applies (bank needs it); the whole-table checks in the runner.
    checks = f"checks=[{', '.join(CHECKS)}]"
    return load_scenario(BANK, [checks, "check_engine=pyarrow", f"source.accounts={ACCOUNTS}"])


@pytest.fixture
def paths(tmp_path: Path) -> RunPaths:
    paths = RunPaths(tmp_path / "run", tmp_path / "run" / "table")
    paths.history.mkdir(parents=True)
    Table.create(str(paths.table), TableConfig(file_groups=2), SCHEMA, max_skew_ms=0).close()
    return paths


def test_no_check_is_valid_without_evidence(paths: RunPaths) -> None:
    scenario = _scenario()
    results = run_checks(scenario, [], read_final_state(scenario, paths), paths)
    assert [r.name for r in results] == list(CHECKS)
    assert {r.name: r.verdict for r in results if r.verdict == "valid"} == {}


def test_the_same_checks_are_valid_with_evidence(paths: RunPaths) -> None:
    """The bank's opening rows (no stream batch expected) and one as-of read of them:
    everything but exactly_once, which has no certain batch, reaches valid."""
    scenario = _scenario()
    table = Table.open(str(paths.table))
    read = commit_opening_balances(table, ACCOUNTS)
    table.close()
    results = run_checks(scenario, [read], read_final_state(scenario, paths), paths)
    verdicts = {r.name: r.verdict for r in results}
    assert verdicts.pop("exactly_once") == "unknown"  # no stream batch: nothing was certain
    assert set(verdicts.values()) == {"valid"}, {r.name: r.evidence for r in results}


def test_the_opening_rows_are_what_the_read_says(paths: RunPaths) -> None:
    """The fixture's read above is made of the opening rows' ids (-1 .. -ACCOUNTS)."""
    spec = EventSpec(mode="bank", seed=1, partitions=2, accounts=ACCOUNTS)
    ids = opening_balances(spec).column("id")
    assert fingerprint(ids) == fingerprint(pa.array(-1 - np.arange(ACCOUNTS)))
