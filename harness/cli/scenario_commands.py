"""The commands about one scenario: validate, schema, faults, run, report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from harness.cli.app import (
    EXIT_ERROR,
    JsonOpt,
    QuietOpt,
    ScenarioArg,
    SetOpt,
    app,
    documents_only,
    err,
    examples,
    fail,
    load,
    out,
    stops_cleanly,
)
from harness.cli.tables import print_summary
from harness.scenario import expand_matrix


@app.command(
    epilog=examples(
        "instantbench validate scenarios/smoke.yaml",
        "instantbench validate scenarios/smoke.yaml --set engine.instant_mode=blocking",
    )
)
def validate(scenario: ScenarioArg, set_: SetOpt = None) -> None:
    """Parse and check a scenario file without running it."""
    loaded = load(scenario, set_)
    variants = expand_matrix(loaded)
    out.print(f"{scenario}: valid ({len(variants)} variant(s))", markup=False)


@app.command(
    epilog=examples(
        "instantbench schema > scenarios/scenario.schema.json",
        "instantbench schema suite > scenarios/suites/suite.schema.json",
        "first line of a scenario: # yaml-language-server: $schema=scenario.schema.json",
    )
)
def schema(
    kind: Annotated[str, typer.Argument(help="scenario | suite")] = "scenario",
) -> None:
    """Print the JSON Schema of scenario (or suite) files, generated from their model, for
    editors and tools."""
    from harness.schemas import SCHEMAS, schema_text

    if kind not in SCHEMAS:
        fail(f"schema: unknown kind {kind!r}; allowed: {' | '.join(SCHEMAS)}")
    typer.echo(schema_text(kind), nl=False)


def _fault_kinds() -> list[str]:
    from harness.faults.catalog import fault_models

    return list(fault_models())


@app.command(
    epilog=examples("instantbench faults", "instantbench faults clock_skew --json | jq .[0].keys")
)
def faults(
    kind: Annotated[
        str | None,
        typer.Argument(help="one fault kind (default: all)", autocompletion=_fault_kinds),
    ] = None,
    json_: Annotated[bool, typer.Option("--json", help="machine-readable")] = False,
) -> None:
    """List every fault kind: its keys (type, default), targets, points and evidence."""
    from harness.faults.catalog import catalog, render

    docs = catalog()
    if kind is not None:
        docs = [d for d in docs if d.kind == kind]
        if not docs:
            allowed = ", ".join(_fault_kinds())
            typer.echo(f"faults: unknown kind {kind!r}; allowed: {allowed}", err=True)
            raise typer.Exit(EXIT_ERROR)
    if json_:
        typer.echo(json.dumps([d.to_dict() for d in docs], indent=2))
    else:
        typer.echo(render(docs), nl=False)


@app.command(
    epilog=examples(
        "instantbench run scenarios/smoke.yaml --out runs",
        "instantbench run scenarios/faults/writer-crash.yaml --set duration_s=30 --quiet",
        "instantbench run scenarios/smoke.yaml --json | jq .verdict",
    )
)
@stops_cleanly
def run(
    scenario: ScenarioArg,
    out_dir: Annotated[Path, typer.Option("--out", help="where run directories go")] = Path("runs"),
    set_: SetOpt = None,
    quiet: QuietOpt = False,
    json_: JsonOpt = False,
) -> None:
    """Run a scenario (each matrix variant once) and check it.

    With --json, stdout carries each variant's result.json, one document per line."""
    # The CLI is the shell over every layer: the runner (pyspark) and the reports.
    from harness.checks.verdict import worst_exit_code
    from harness.jobs.ceiling import resolve_load
    from harness.runner.run import run_scenario
    from reports import render_run

    loaded, _ = resolve_load(load(scenario, set_), out_dir, quiet)
    verdicts: list[str] = []
    with documents_only(json_) as stdout:
        for variant, resolved in expand_matrix(loaded):
            outcome = run_scenario(resolved, out_dir, variant or None, quiet)
            render_run(outcome.paths.root)
            verdicts.append(outcome.verdict)
            if json_:
                print(json.dumps(outcome.result, default=str), file=stdout, flush=True)
            print_summary(outcome.paths.root, outcome.result, err if json_ else out)
    raise typer.Exit(worst_exit_code(verdicts))


@app.command(epilog=examples("instantbench report runs/smoke-20260101T120000"))
def report(run_dir: Annotated[Path, typer.Argument(help="a run directory")]) -> None:
    """Render report.html and report.md of a run directory (from its result files)."""
    from harness.checks.verdict import EXIT_CODES
    from reports import render_run

    if not (run_dir / "result.json").is_file():
        fail(f"{run_dir}: not a run directory (no result.json)")
    try:
        result = json.loads((run_dir / "result.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
        fail(f"{run_dir / 'result.json'}: not readable as JSON ({' '.join(str(exc).split())})")
    if not isinstance(result, dict) or result.get("verdict") not in EXIT_CODES:
        fail(f"{run_dir / 'result.json'}: not a run result (needs verdict valid|invalid|unknown)")
    try:
        html, md = render_run(run_dir)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        # A run directory whose result files were damaged or cut short.
        fail(f"{run_dir}: cannot render its result files ({type(exc).__name__}: {exc})")
    out.print(f"{html}\n{md}", markup=False)
