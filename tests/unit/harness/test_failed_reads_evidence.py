"""A failed read is evidence (issue 26 item 3): one as-of read, pull or snapshot of a reader
that raised leaves isolation unknown, even where other reads of its kind succeeded; a read
a clean moved out of the retention window is the one excuse, recorded by the reader as
`read_out_of_window` and never counted as a failure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_isolation_dirty_reads import commit, new_table
from test_reads_retention_window import _final, _rewrites

from engine.table import Table, cleaning
from harness.history import HistoryWriter, read_events
from harness.runner.check_inputs import run_checks
from harness.runner.rundir import RunPaths
from harness.scenario import load_scenario
from harness.workload import readers
from harness.workload.readers import ReaderThread


def isolation_of(tmp_path: Path, table: Table, retain_commits: int = 2) -> dict[str, Any]:
    """The isolation check through the runner, on the reader's history and the table, with
    the cleaner's window recomputed under `retain_commits`."""
    path = tmp_path / "scenario.yaml"
    path.write_text("name: t\nchecks: [isolation]\n")
    events = read_events(tmp_path / "history")
    paths = RunPaths(root=tmp_path, table=tmp_path / "table")
    final = _final(table, retain_commits)
    (result,) = run_checks(load_scenario(path, []), events, final, paths)
    return result.to_dict()


def _cleaned_file(table: Table, as_of: str) -> str:
    """A file a read as of `as_of` reads that the clean deleted (what the read failed on)."""
    read = cleaning.latest_files(table.reload().catalog.view(as_of=as_of))
    return sorted(read & cleaning.cleaned_files(table))[0]


def fail_once(monkeypatch: pytest.MonkeyPatch, kind: str, error: Exception) -> None:
    """The reader's next read of `kind` raises `error`; the rest read as usual."""
    real, left = readers.perform_read, [error]

    def flaky(table: Table, read_kind: str, **kwargs: Any) -> dict[str, Any]:
        if read_kind == kind and left:
            raise left.pop()
        return real(table, read_kind, **kwargs)

    monkeypatch.setattr(readers, "perform_read", flaky)


@pytest.mark.parametrize("kind", ["snapshot", "as_of", "incremental"])
def test_one_failed_read_among_successes_makes_isolation_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    table = new_table(tmp_path)
    history = HistoryWriter(tmp_path / "history", "runner")
    reader = ReaderThread(0, table.path, 1.0, history, bank=False, seed=1)
    for n in range(3):  # every kind succeeds at least once (a pull needs a new commit)
        commit(table, range(5 * n, 5 * n + 5))
        reader.read_once()
    assert isolation_of(tmp_path, table)["verdict"] == "valid"
    commit(table, range(15, 20))
    fail_once(monkeypatch, kind, OSError("storage timed out"))
    reader.read_once()
    reader.table.close()
    failed = [e for e in read_events(tmp_path / "history") if e["kind"] == "read_error"]
    assert [e["read_kind"] for e in failed] == [kind]
    result = isolation_of(tmp_path, table)
    assert result["verdict"] == "unknown", result
    assert "1 read(s) failed" in result["reason"]
    assert result["failed_reads"]["count"] == 1
    assert result["failed_reads"]["never_succeeded"] == []


def test_a_read_out_of_the_window_stays_excused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = new_table(tmp_path)
    _rewrites(table, 5)
    cleaning.clean(table, retain_commits=2)
    history = HistoryWriter(tmp_path / "history", "runner")
    reader = ReaderThread(0, table.path, 1.0, history, bank=False, seed=3)
    reader.read_once()
    real = readers.perform_read

    def cleaned_meanwhile(table: Table, read_kind: str, **kwargs: Any) -> dict[str, Any]:
        if read_kind == "as_of":  # a clean moved past its point while it read
            _rewrites(table, 3)
            cleaning.clean(table, retain_commits=1)
            raise FileNotFoundError(f"cannot open {_cleaned_file(table, kwargs['as_of'])}")
        return real(table, read_kind, **kwargs)

    monkeypatch.setattr(readers, "perform_read", cleaned_meanwhile)
    reader.read_once()
    reader.table.close()
    kinds = [e["kind"] for e in read_events(tmp_path / "history")]
    assert "read_out_of_window" in kinds and "read_error" not in kinds
    result = isolation_of(tmp_path, table, retain_commits=1)
    assert result["verdict"] == "valid", result
    assert result["failed_reads"]["count"] == 0
    # Judged under a configured retention of 5 commits, those cleans went too far: the
    # failure is no longer excused, whatever the reader called it.
    strict = isolation_of(tmp_path, table, retain_commits=5)
    assert strict["verdict"] == "unknown" and strict["failed_reads"]["count"] == 1


def test_a_snapshot_whose_version_a_clean_retired_while_it_read_is_excused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The snapshot loaded commit c; another writer committed and a clean that retains one
    commit deleted c's files before the read got to them: no lost data, as for time travel
    (faults/coordinator-crash.yaml cleans every interval with clean_retain_commits: 1)."""
    table = new_table(tmp_path)
    _rewrites(table, 3)
    history = HistoryWriter(tmp_path / "history", "runner")
    reader = ReaderThread(0, table.path, 1.0, history, bank=False, seed=3)
    real, raced = readers.perform_read, []

    def retired_meanwhile(loaded: Table, read_kind: str, **kwargs: Any) -> dict[str, Any]:
        if read_kind == "snapshot" and not raced:
            raced.append(max(i.completed_at for i in loaded.timeline.completed()))
            _rewrites(table, 2)  # the writer's own handle: the reader's timeline stays loaded
            cleaning.clean(table, retain_commits=1)
            raise FileNotFoundError(f"cannot open {_cleaned_file(table, raced[0])}")
        return real(loaded, read_kind, **kwargs)

    monkeypatch.setattr(readers, "perform_read", retired_meanwhile)
    reader.read_once()
    (event,) = [e for e in read_events(tmp_path / "history") if e["kind"] != "read"]
    assert event["kind"] == "read_out_of_window" and event["read_kind"] == "snapshot"
    assert event["as_of"] == raced[0]  # the version it had loaded
    reader.read_once()  # the next snapshot reads the new version: a failure there would count
    reader.table.close()
    result = isolation_of(tmp_path, table, retain_commits=1)
    assert result["verdict"] == "valid", result


def test_a_snapshot_that_fails_inside_the_window_still_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = new_table(tmp_path)
    _rewrites(table, 3)
    cleaning.clean(table, retain_commits=1)
    history = HistoryWriter(tmp_path / "history", "runner")
    reader = ReaderThread(0, table.path, 1.0, history, bank=False, seed=3)
    fail_once(monkeypatch, "snapshot", FileNotFoundError("a file the latest slice needs"))
    reader.read_once()
    reader.table.close()
    kinds = [e["kind"] for e in read_events(tmp_path / "history")]
    assert kinds == ["read_error"]
