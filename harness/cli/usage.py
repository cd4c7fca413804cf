"""Usage errors of the command line as one line: exit 2, naming the option (or argument, or
command) and what is allowed, instead of click's multi-line usage box (the project's rule
for bad input: exit 2 and one line naming the key and what is allowed)."""

from __future__ import annotations

import sys
from typing import Any, NoReturn

import typer
from typer._click import exceptions as click  # typer 0.29 vendors click as typer._click
from typer.core import TyperGroup

EXIT_USAGE = 2


def _options(command: Any) -> list[str]:
    return [
        name
        for p in command.params
        if p.param_type_name == "option" and not getattr(p, "hidden", False)
        for name in (*p.opts, *p.secondary_opts)
    ]


def usage_line(error: click.UsageError) -> str:
    """`<command path>: <what is wrong>; <what is allowed>`, on one line."""
    ctx = error.ctx
    if ctx is None:
        return " ".join(error.format_message().split())
    command, where = ctx.command, ctx.command_path
    usage = f"usage: {where} {' '.join(command.collect_usage_pieces(ctx))}"
    if isinstance(error, click.NoSuchOption):
        allowed = ", ".join(_options(command))
        return f"{where}: no such option {error.option_name} (allowed: {allowed})"
    if isinstance(error, click.MissingParameter) and error.param is not None:
        param = error.param
        what = f"{param.param_type_name} {param.name}"
        help_text = getattr(param, "help", None)  # options and typer's arguments have one
        if help_text:
            what += f" ({help_text})"
        return f"{where}: missing {what}; {usage}"
    message = " ".join(error.format_message().split())  # click's text, on one line
    if hasattr(command, "list_commands"):  # the group: no such command
        return f"{where}: {message} (allowed: {', '.join(command.list_commands(ctx))})"
    return f"{where}: {message}; {usage}"


def _exit(line: str, code: int) -> NoReturn:
    typer.echo(line, err=True)
    sys.exit(code)


class OneLineUsageErrors(TyperGroup):
    """The app's command group: every click usage error (an unknown option or command, a
    missing argument, a value of the wrong type) is one line on stderr and exit 2."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False  # errors come here instead of click's printer
        try:
            code = super().main(*args, **kwargs)
        except click.NoArgsIsHelpError as e:  # `instantbench` alone: the help (rich prints
            help_text = e.ctx.get_help()  # it itself and returns "")
            if help_text:
                typer.echo(help_text)
            sys.exit(EXIT_USAGE)
        except click.UsageError as e:
            _exit(usage_line(e), EXIT_USAGE)
        except click.ClickException as e:
            _exit(" ".join(e.format_message().split()), e.exit_code)
        except typer.Abort:
            _exit("Aborted!", 1)
        sys.exit(code if isinstance(code, int) else 0)
