"""The jinja2 environment: HTML templates autoescaped, Markdown ones not."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from reports.tables import fmt

TEMPLATES = Path(__file__).parent / "templates"


def md_cell(value: object) -> str:
    """A value that stays inside one Markdown table cell."""
    return str(value).replace("|", "\\|").replace("\n", " ")


@cache
def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(enabled_extensions=("html",), default=False),
        # A misspelt variable in a template is a bug to see in tests, not an empty cell.
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["fmt"] = fmt
    env.filters["md"] = md_cell
    return env


def render(template: str, **context: object) -> str:
    return environment().get_template(template).render(**context)
