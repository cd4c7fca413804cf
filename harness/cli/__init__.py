"""`instantbench`: the command line (DESIGN.md, "CLI"). Exit codes: 0 valid, 1 invalid, 2 error.

harness/cli/app.py holds the application and what its commands share; the commands are
registered by importing their modules, in the order `--help` lists them.
"""

# Registered in this order: the scenario's commands, then the jobs'.
from harness.cli import scenario_commands  # noqa: F401, I001
from harness.cli import job_commands  # noqa: F401
from harness.cli.app import app


def main() -> None:
    app()


__all__ = ["app", "main"]
