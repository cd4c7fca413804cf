"""The engine names its fault points (engine/table/fault_points.py) and the operation at
each seam (engine/table/operations.py); the scenario's points are generated from that
enum, so validate refuses a point the engine does not have."""

from __future__ import annotations

import pytest

from engine.config import TableConfig
from engine.table import Table
from engine.table.fault_points import FaultPoint, fault_point
from engine.table.operations import Operation, Seam
from harness.scenario import ScenarioError, validate_scenario
from harness.scenario.faults import TABLE_POINTS
from tests.unit.engine.engine_helpers import rows


def _pause_at(point: str):
    return validate_scenario(
        {
            "name": "points",
            "faults": [{"kind": "coordinator_pause", "at_s": 5, "duration_s": 9, "point": point}],
        },
        "test",
    )


def test_the_scenario_s_table_points_are_the_engine_s_enum():
    assert tuple(p.value for p in FaultPoint) == TABLE_POINTS
    assert _pause_at(FaultPoint.ROLLBACK_BEFORE_CLAIM.value).faults


def test_a_point_the_engine_does_not_name_is_refused():
    with pytest.raises(ScenarioError) as info:
        _pause_at("commit_before_nothing")
    (problem,) = info.value.problems
    assert problem.key == "faults.0.point"


def test_each_seam_carries_the_operation_running_it(tmp_path):
    path = str(tmp_path / "t")
    Table.create(path, TableConfig(file_groups=1), rows([0]).schema, max_skew_ms=0).close()
    table = Table.open(path, max_skew_ms=0)
    seen: list[tuple[str, Operation | None, FaultPoint | None]] = []
    table.fence.hooks.append(
        lambda seam, info: seen.append((seam, info["operation"], fault_point(seam, info)))
    )
    t = table.start_instant()
    started = len(seen)
    table.commit(t, table.write_files(t, rows([1])))
    assert {op for _, op, _ in seen[:started]} == {Operation.INSTANT}
    assert {op for _, op, _ in seen[started:]} == {Operation.COMMIT}
    assert FaultPoint.INSTANT_BEFORE_REQUESTED in {p for *_, p in seen}
    assert FaultPoint.COMMIT_BEFORE_COMPLETED in {p for *_, p in seen}


def test_a_seam_outside_every_operation_names_no_point():
    assert fault_point(Seam.BEFORE_DELETE, {"operation": None, "path": "x"}) is None
    assert fault_point(Seam.AFTER_WRITE, {"operation": Operation.COMMIT, "path": "x"}) is None
    assert fault_point(Seam.AFTER_CHECKS, {"operation": Operation.COMMIT}) is (
        FaultPoint.COMMIT_AFTER_CHECKS
    )
