"""The judge recomputes the cleaner's retention window from the completed commits and the
configured retention (harness/checks/retention.py), never from the clean plans: a cleaner
that retained fewer commits than configured is caught by its deletions and by the reads
it made fail, which the reader's own `read_out_of_window` label cannot excuse."""

from __future__ import annotations

from test_reads_retention_window import _rewrites

from engine.table import cleaning
from harness.checks.retention import clean_boundaries, excused, in_window
from harness.runner.final_state import _timeline_instants, retention_of
from tests.unit.harness.test_isolation_dirty_reads import new_table


def test_a_cleaner_that_kept_fewer_commits_than_configured_is_caught(tmp_path) -> None:
    table = new_table(tmp_path)
    completions = _rewrites(table, 6)
    cleaning.clean(table, retain_commits=1)  # the configured retention is 2
    assert cleaning.retained_from(table.reload()) == completions[-1]  # its own plan says so
    window = retention_of(table, retain_commits=2)
    assert window.start == completions[-2]  # the judge's: the second latest commit
    # Commit 5's files were deleted, but a read as of it is inside the window: missing.
    instants = {i["completed"]: i for i in _timeline_instants(table, window.deletable)}
    assert not instants[completions[-2]]["files_exist"]
    assert all(instants[c]["files_exist"] for c in completions[:-2] + completions[-1:])
    # The same table judged under the retention the cleaner used: nothing is missing.
    honest = retention_of(table, retain_commits=1)
    assert all(i["files_exist"] for i in _timeline_instants(table, honest.deletable))


def test_a_failed_read_is_excused_only_before_the_window_and_on_a_deletable_file(
    tmp_path,
) -> None:
    table = new_table(tmp_path)
    completions = _rewrites(table, 6)
    cleaning.clean(table, retain_commits=2)
    window = retention_of(table, retain_commits=2)
    gone = sorted(window.deletable)[0]
    old = {"read_kind": "as_of", "as_of": completions[0], "error": f"FileNotFoundError: {gone}"}
    assert excused(old, window.start, window.deletable)
    other = {**old, "error": "OSError: connection reset"}  # not a file a clean deleted
    assert not excused(other, window.start, window.deletable)
    inside = {**old, "as_of": completions[-2]}  # the reader called it out of the window
    assert not excused(inside, window.start, window.deletable)
    pull = {"read_kind": "incremental", "begin": None, "error": old["error"]}  # from the start
    assert excused(pull, window.start, window.deletable)


def test_boundaries_follow_the_commits_completed_before_each_clean() -> None:
    def instant(requested: str, completed: str | None, action: str = "commit") -> dict:
        state = "completed" if completed else "inflight"
        return {"requested": requested, "completed": completed, "action": action, "state": state}

    listed = [
        instant("01", "02"),
        instant("03", "04"),
        instant("05", "06"),
        instant("07", "08", "clean"),  # three commits before it: retain 2 -> from "04"
        instant("09", "10"),
        instant("11", None),  # inflight: not a commit to retain
        instant("12", "13", "clean"),  # four before it -> from "06"
        instant("05", "06"),  # listed twice (active and archived): counted once
    ]
    assert clean_boundaries(listed, 2) == ["04", "06"]
    assert clean_boundaries(listed, 0) == [] and clean_boundaries(listed, 4) == []
    assert in_window("06", "06") and not in_window("06", "05") and not in_window("06", None)
    assert in_window(None, None)
