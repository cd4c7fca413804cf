"""The seams and services suites (nightly) parse, and their entries can reach what they
are about: each rollback seam follows a coordinator crash whose recovery rolls back (a torn
file never did), and each services entry has a table service on."""

from pathlib import Path

from harness.jobs.suite import load_suite

SUITES = Path(__file__).parents[3] / "scenarios" / "suites"


def test_every_rollback_seam_follows_a_coordinator_crash() -> None:
    suite = load_suite(SUITES / "seams.yaml")
    rollback = [e for e in suite.entries if "rollback" in e.id]
    assert len(rollback) == 4
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
