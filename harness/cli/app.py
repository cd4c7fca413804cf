"""The `instantbench` application: its options, its consoles and what every command shares
(one-line errors with exit 2, clean stops on SIGINT/SIGTERM, --json documents on stdout)."""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TextIO, TypeVar

import typer
from rich.console import Console

from harness.cli.usage import OneLineUsageErrors
from harness.scenario import ScenarioError, load_scenario

if TYPE_CHECKING:
    from harness.scenario import Scenario

# Bad input and errors; verdicts map to exit codes in harness.checks.verdict.exit_code
# (imported where used: harness.checks is slow to import for a CLI that only validates).
EXIT_ERROR = 2

# add_completion: `instantbench --install-completion` (bash, zsh, fish, PowerShell).
app = typer.Typer(
    cls=OneLineUsageErrors,  # usage errors: one line, exit 2 (harness/cli/usage.py)
    add_completion=True,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
# soft_wrap: a long line stays one line (a path is not cut in two), as tools expect.
err = Console(stderr=True, soft_wrap=True)
out = Console(soft_wrap=True)

ScenarioArg = Annotated[Path, typer.Argument(help="scenario YAML file")]
SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", help="override a dotted key, e.g. engine.instant_mode=blocking"),
]
JsonOpt = Annotated[
    bool,
    typer.Option("--json", help="print the result document on stdout (progress on stderr)"),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", help="no progress display")]


@contextlib.contextmanager
def documents_only(json_: bool) -> Iterator[TextIO]:
    """With --json, stdout carries the result documents only: whatever else is printed
    meanwhile goes to stderr. Yields the real stdout, for the documents."""
    stdout = sys.stdout
    with contextlib.redirect_stdout(sys.stderr) if json_ else contextlib.nullcontext():
        yield stdout


def examples(*commands: str) -> str:
    """A command's `--help` epilog: one example per paragraph (rich joins single lines)."""
    return "Examples:\n\n" + "\n\n".join(f"  $ {c}" for c in commands)


def fail(message: object) -> NoReturn:
    """Exit 2 with the message verbatim on stderr, one line per problem (no terminal markup:
    a `[x]` in a path or an allowed pattern must stay as it is)."""
    for line in str(message).splitlines() or [""]:
        typer.echo(line, err=True)
    raise typer.Exit(EXIT_ERROR)


Command = TypeVar("Command", bound=Callable)


def stops_cleanly(command: Command) -> Command:
    """For commands that start processes: SIGINT and SIGTERM (a CI time-out, `docker stop`)
    stop them one way (harness.runner.interrupt), then exit 2 with one line, as does a
    cluster that cannot start."""

    @functools.wraps(command)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        from harness.runner.errors import RunError
        from harness.runner.interrupt import as_interrupted, signals_interrupt
        from infra.cluster import ClusterError

        try:
            with signals_interrupt():
                return command(*args, **kwargs)
        except KeyboardInterrupt as exc:
            stopped = as_interrupted(exc)
            where = f"; partial results (verdict unknown) in {stopped.run_dir}"
            fail(f"interrupted by {stopped.name}{where if stopped.run_dir else ''}")
        except ClusterError as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            fail(f"cluster: {first}")
        except RunError as exc:  # could not start: no run directory, no table
            fail(" ".join(str(exc).split()))

    return guarded  # type: ignore[return-value]


def load(path: Path, overrides: list[str] | None) -> Scenario:
    """The scenario with its --set overrides, or exit 2 naming the file and the key."""
    try:
        return load_scenario(path, overrides or [])
    except ScenarioError as exc:
        fail(exc)
