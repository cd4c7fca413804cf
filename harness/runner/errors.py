"""Errors of a run, importable without the runner's (Spark's) dependencies."""


class RunError(RuntimeError):
    """The run could not be carried out (its verdict is unknown, or it never started)."""
