"""The seams and services suites (nightly) parse, and their entries can reach what they
are about: the seams suite pauses the coordinator at every point (fencing on) and a batch
writer at every seam of its critical section, each rollback seam follows a coordinator
crash whose recovery rolls back (a torn file never did), a cleaner's or archival's seam
runs with that service on, and each services entry has a table service on."""

from pathlib import Path
from typing import Any, get_args

from harness.jobs.suite import Suite, load_suite
from harness.scenario.faults import TABLE_POINTS, PausePoint

SUITES = Path(__file__).parents[3] / "scenarios" / "suites"
# Points no stream run reaches (the unit sweep, tests/unit/harness/test_pause_seams.py,
# pauses there): recovery rolls back only an instant created ahead, which holds no file.
NOT_IN_A_STREAM = {"rollback_before_delete"}


def _points(suite: Suite, kind: str, fencing: bool) -> dict[str, Any]:
    """point -> an entry that pauses there (by `kind`, with fencing on or off)."""
    return {
        f.point: e
        for e in suite.entries
        if e.scenario.engine.safety.fencing == fencing
        for f in e.scenario.faults
        if f.kind == kind
    }


def test_the_seams_suite_pauses_at_every_point() -> None:
    suite = load_suite(SUITES / "seams.yaml")
    coordinator = _points(suite, "coordinator_pause", fencing=True)
    assert set(coordinator) == set(get_args(PausePoint)) - NOT_IN_A_STREAM
    critical = {p for p in TABLE_POINTS if p.startswith(("instant_", "commit_"))}
    assert set(_points(suite, "batch_writer_pause", fencing=True)) == critical | {"random"}
    services = coordinator["clean_before_delete"].scenario.table.services
    assert services.clean_retain_commits > 0
    assert coordinator["archive_before_delete"].scenario.table.services.archive_keep > 0


def test_every_rollback_seam_follows_a_coordinator_crash() -> None:
    suite = load_suite(SUITES / "seams.yaml")
    rollback = [e for e in suite.entries if "rollback" in e.id]
    assert {e.scenario.faults[-1].point for e in rollback} == {
        p for p in TABLE_POINTS if p.startswith("rollback_")
    } - NOT_IN_A_STREAM
    for entry in rollback:
        kinds = [f.kind for f in entry.scenario.faults]
        assert kinds == ["coordinator_crash", "coordinator_pause"], entry.id
        crash, pause = entry.scenario.faults
        assert crash.point == "after_ack_before_commit" and crash.at_s <= pause.at_s
        assert pause.point.startswith("rollback_")
        assert entry.scenario.engine.instant_mode == "async"  # an instant made ahead


def test_every_services_entry_runs_a_table_service() -> None:
    suite = load_suite(SUITES / "services.yaml")
    assert len(suite.entries) >= 5
    for entry in suite.entries:
        services = entry.scenario.table.services
        assert services.clean_retain_commits > 0 and services.archive_keep > 0, entry.id
