"""How the runner takes its last driver's exit (harness/runner/run.py stop_error). The
detection sweep's verify-writes-torn3-at12-off ended unknown: its second torn file made
the restarted driver's final commit fail as the run stopped (the coordinator stops
loudly on a commit that can never succeed), and the run called that its own failure."""

from __future__ import annotations

import signal
from pathlib import Path

from harness.pipeline.config import COMMIT_REFUSED_EXIT, FAILED_EXIT
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
