"""A hosts run's runner process answers its owner through a pickle in the run's control
folder: the owner returns the outcome, raises the child's error or interruption as if it
had happened in the owner, and a child that died without answering is an error that
names where to look."""

from __future__ import annotations

import pickle
import signal

import pytest

from harness.runner import runner_host
from harness.runner.errors import RunError
from harness.runner.interrupt import Interrupted
from harness.runner.rundir import RunOutcome, RunPaths


def _paths(tmp_path) -> RunPaths:
    root = tmp_path / "run"
    (root / "control").mkdir(parents=True)
    return RunPaths(root=root, table=root / "table")


def _answer_with(paths: RunPaths, answer) -> None:
    (paths.control / runner_host.ANSWER_FILE).write_bytes(pickle.dumps(answer))


def test_the_outcome_is_returned(tmp_path):
    paths = _paths(tmp_path)
    _answer_with(paths, ("outcome", RunOutcome(paths, {"verdict": "valid"})))
    assert runner_host._answer(paths, 0).verdict == "valid"


def test_an_interruption_is_raised_with_its_signal_and_partial_result(tmp_path):
    paths = _paths(tmp_path)
    _answer_with(paths, ("interrupted", (signal.SIGTERM, paths.root)))
    with pytest.raises(Interrupted) as raised:
        runner_host._answer(paths, 0)
    assert raised.value.name == "SIGTERM" and raised.value.run_dir == paths.root


def test_the_child_s_error_is_raised_as_it_was(tmp_path):
    paths = _paths(tmp_path)
    _answer_with(paths, ("raised", RunError("table.path: cannot create the table")))
    with pytest.raises(RunError, match="cannot create the table"):
        runner_host._answer(paths, 0)


def test_a_child_that_died_without_answering_is_an_error_naming_its_logs(tmp_path):
    paths = _paths(tmp_path)
    with pytest.raises(RunError, match=r"exited with -9 without an answer.*logs"):
        runner_host._answer(paths, -9)


def test_an_exception_that_cannot_cross_processes_keeps_its_name_and_message():
    class Unpicklable(Exception):
        def __reduce__(self):
            raise TypeError("no")

    crossed = runner_host._picklable(Unpicklable("the lock's lease ran out"))
    assert isinstance(crossed, RuntimeError)
    assert str(crossed) == "Unpicklable: the lock's lease ran out"
    assert runner_host._picklable(RunError("x")).args == ("x",)
