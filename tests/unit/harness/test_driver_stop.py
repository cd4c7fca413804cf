"""How the runner takes its last driver's exit (harness/runner/run.py stop_error). The
detection sweep's verify-writes-torn3-at12-off ended unknown: its second torn file made
the restarted driver's final commit fail as the run stopped (the coordinator stops
loudly on a commit that can never succeed), and the run called that its own failure."""

from __future__ import annotations

import signal
from pathlib import Path

from engine.errors import FencedError
from engine.stream.errors import CommitFailedError
from harness.pipeline.config import (
    COMMIT_REFUSED_EXIT,
    FAILED_EXIT,
    FENCED_EXIT,
    TABLE_SERVICE_FAILED_EXIT,
)
from harness.pipeline.driver import exit_code
from harness.runner.analysis import run_error, table_service_failure
from harness.runner.run import stop_error

LOG = Path("/runs/r/logs/driver-1.log")


def test_a_clean_stop_and_a_commit_refused_for_good_leave_the_verdict_to_the_checks() -> None:
    assert stop_error(0, LOG) is None
    assert stop_error(COMMIT_REFUSED_EXIT, LOG) is None


def test_any_other_exit_is_the_runs_failure_naming_the_log() -> None:
    # FAILED_EXIT: e.g. a storage error at the final commit; recovery would recommit it
    for code in (1, FAILED_EXIT, -signal.SIGKILL, None):
        error = stop_error(code, LOG)
        assert error is not None and str(LOG) in error and f"exit {code}" in error


def test_a_table_service_that_raised_fails_the_driver_with_its_own_code() -> None:
    assert exit_code(None, None) == FAILED_EXIT
    assert exit_code(None, OSError("clean: delete failed")) == TABLE_SERVICE_FAILED_EXIT
    assert exit_code(None, FencedError("a newer epoch")) == FENCED_EXIT  # a zombie's
    assert exit_code(CommitFailedError("torn"), OSError("x")) == COMMIT_REFUSED_EXIT
    assert "exit 6" in str(stop_error(TABLE_SERVICE_FAILED_EXIT, LOG))


def test_a_table_service_failure_makes_the_run_unknown_unless_a_fence_caused_it() -> None:
    def failed(kind: str, fenced: bool) -> dict:
        return {"t": 1.0, "kind": kind, "src": "driver", "error": "OSError: x", "fenced": fenced}

    assert table_service_failure([]) is None
    assert table_service_failure([failed("table_service_failed", True)]) is None
    error = table_service_failure(
        [failed("compaction_failed", True), failed("table_service_failed", False)]
    )
    assert error is not None and "table_service_failed: OSError: x" in error


def test_the_run_error_names_the_failed_table_service_before_the_driver_exit_it_caused() -> None:
    """Whether the compaction failed mid-run (the driver restarted and stopped cleanly) or
    at the end (the last driver's exit 6 is the run's error), the error names it."""
    failed = {"t": 1.0, "kind": "compaction_failed", "src": "driver", "error": "OSError: put"}
    exit_6 = stop_error(TABLE_SERVICE_FAILED_EXIT, LOG)
    assert run_error(None, []) is None
    assert run_error(exit_6, []) == exit_6
    assert run_error(None, [failed]) == table_service_failure([failed])
    error = run_error(exit_6, [failed])
    assert error is not None and error.startswith("a table service failed (compaction_failed")
    assert error.endswith(str(exit_6))
