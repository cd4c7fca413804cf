"""`instantbench`: the command line (DESIGN.md, "CLI"). Exit codes: 0 valid, 1 invalid, 2 error."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from harness.scenario import ScenarioError, expand_matrix, load_scenario

EXIT_VALID, EXIT_INVALID, EXIT_ERROR = 0, 1, 2
VERDICT_EXIT = {"valid": EXIT_VALID, "invalid": EXIT_INVALID, "unknown": EXIT_ERROR}

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False)
err = Console(stderr=True)
out = Console()

ScenarioArg = Annotated[Path, typer.Argument(help="scenario YAML file")]
SetOpt = Annotated[
    list[str] | None,
    typer.Option("--set", help="override a dotted key, e.g. engine.instant_mode=blocking"),
]


def _load(path: Path, overrides: list[str] | None):
    try:
        return load_scenario(path, overrides or [])
    except ScenarioError as exc:
        err.print(f"[red]invalid scenario[/red]\n{exc}", highlight=False)
        raise typer.Exit(EXIT_ERROR) from None


@app.command()
def validate(scenario: ScenarioArg, set_: SetOpt = None) -> None:
    """Parse and check a scenario file without running it."""
    loaded = _load(scenario, set_)
    variants = expand_matrix(loaded)
    out.print(f"{scenario}: valid ({len(variants)} variant(s))")


@app.command()
def run(
    scenario: ScenarioArg,
    out_dir: Annotated[Path, typer.Option("--out", help="where run directories go")] = Path("runs"),
    set_: SetOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="no progress display")] = False,
) -> None:
    """Run a scenario (each matrix variant once) and check it."""
    # The CLI is the shell over every layer: the runner (pyspark) and the reports.
    from harness.runner.run import run_scenario
    from reports import render_run

    loaded = _load(scenario, set_)
    worst = EXIT_VALID
    for variant, resolved in expand_matrix(loaded):
        outcome = run_scenario(resolved, out_dir, variant or None, quiet)
        render_run(outcome.paths.root)
        code = VERDICT_EXIT.get(outcome.verdict, EXIT_ERROR)
        worst = max(worst, code)
        _print_summary(outcome.paths.root, outcome.result)
    raise typer.Exit(worst)


@app.command()
def report(run_dir: Annotated[Path, typer.Argument(help="a run directory")]) -> None:
    """Render report.html and report.md of a run directory (from its result files)."""
    from reports import render_run

    if not (run_dir / "result.json").exists():
        err.print(f"{run_dir}: not a run directory (no result.json)")
        raise typer.Exit(EXIT_ERROR)
    html, md = render_run(run_dir)
    out.print(f"{html}\n{md}")


@app.command()
def compare(
    scenario: ScenarioArg,
    axis: Annotated[
        str | None, typer.Option(help="compare along KEY=V1,V2 instead of the matrix")
    ] = None,
    repeat: Annotated[int | None, typer.Option(help="repetitions per variant")] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="where results go")] = Path("runs"),
    set_: SetOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="no progress display")] = False,
) -> None:
    """Run two variants with interleaved repetitions and compare them statistically."""
    from harness.jobs.compare import run_comparison, with_axis
    from reports import render_comparison, render_run

    loaded = _load(scenario, set_)
    if axis:
        try:
            loaded = with_axis(loaded, axis)
        except ScenarioError as exc:
            err.print(f"[red]invalid --axis[/red]\n{exc}", highlight=False)
            raise typer.Exit(EXIT_ERROR) from None
    try:
        result = run_comparison(
            loaded, out_dir, repeat, quiet, on_run=lambda o: render_run(o.paths.root)
        )
    except ValueError as exc:
        err.print(str(exc))
        raise typer.Exit(EXIT_ERROR) from None
    dirs = {v: [o.paths.root for o in outs] for v, outs in result.runs.items()}
    page = render_comparison(dirs, result.out_dir, result.table)
    _print_comparison(result.variants, result.table)
    out.print(f"[bold]{page}[/bold]")
    raise typer.Exit(max(VERDICT_EXIT.get(v, EXIT_ERROR) for v in result.verdicts))


@app.command()
def nightly(
    suite: Annotated[Path, typer.Argument(help="suite YAML (scenarios/suites/)")],
    store: Annotated[Path, typer.Option(help="results store (Parquet, query with SQL)")] = Path(
        "runs/nightly"
    ),
    quiet: Annotated[bool, typer.Option("--quiet", help="no progress display")] = False,
) -> None:
    """Run a suite, append results to the store, flag regressions against its history."""
    from harness.jobs.nightly import run_nightly
    from harness.jobs.suite import SuiteError
    from reports import render_run
    from reports.nightly_report import render_nightly

    try:
        result = run_nightly(suite, store, quiet, on_run=lambda o: render_run(o.paths.root))
    except SuiteError as exc:
        err.print(f"[red]invalid suite[/red]\n{exc}", highlight=False)
        raise typer.Exit(EXIT_ERROR) from None
    page = render_nightly(result.out_dir)
    for finding in result.regressions:
        out.print(f"[red]regression[/red] {finding}")
    out.print(f"[bold]{page}[/bold]")
    raise typer.Exit(result.exit_code)


@app.command()
def capacity(
    scenario: ScenarioArg,
    rates: Annotated[str | None, typer.Option(help="ingest rates to try, e.g. 5000,10000")] = None,
    writers: Annotated[str | None, typer.Option(help="writer parallelism to try, e.g. 1,2")] = None,
    intervals: Annotated[
        str | None, typer.Option(help="checkpoint intervals (s), e.g. 1,2")
    ] = None,
    users: Annotated[str | None, typer.Option(help="Locust users per stage ('' = none)")] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="where results go")] = Path("runs"),
    set_: SetOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="no progress display")] = False,
) -> None:
    """Find the highest ingest rate that holds the SLO; measure OCC contention with Locust."""
    from harness.jobs.capacity import CapacityGrid, run_capacity
    from reports import render_run
    from reports.capacity_report import render_capacity

    loaded = _load(scenario, set_)
    try:
        grid = CapacityGrid.parse(rates=rates, writers=writers, intervals=intervals, users=users)
        result = run_capacity(
            loaded, out_dir, quiet, grid, on_run=lambda o: render_run(o.paths.root)
        )
    except ValueError as exc:
        err.print(str(exc))
        raise typer.Exit(EXIT_ERROR) from None
    page = render_capacity(result.out_dir)
    out.print(result.recommendation)
    out.print(f"[bold]{page}[/bold]")
    raise typer.Exit(result.exit_code)


Backend = Annotated[str, typer.Option("--backend", help="standalone | docker")]


@app.command()
def cluster(
    action: Annotated[str, typer.Argument(help="up | down | status")],
    backend: Backend = "standalone",
    workers: Annotated[int, typer.Option(help="workers (up)")] = 2,
    cores_per_worker: Annotated[int, typer.Option(help="cores per worker (up)")] = 1,
    mount: Annotated[
        list[Path] | None, typer.Option(help="docker: directories mounted at the same path")
    ] = None,
) -> None:
    """Start, stop or inspect a Spark cluster by hand (the state is kept for `down`)."""
    from infra.cli import cluster_down, cluster_status, cluster_up, format_status
    from infra.cluster import ClusterError

    if action not in ("up", "down", "status") or backend not in ("standalone", "docker"):
        err.print(
            f"cluster {action} --backend {backend}: allowed actions up | down | status, "
            "backends standalone | docker"
        )
        raise typer.Exit(EXIT_ERROR)
    try:
        if action == "up":
            info = cluster_up(backend, workers, cores_per_worker, mounts=mount)
            out.print(f"{backend} cluster up: {info.master_url}")
        elif action == "down":
            cluster_down(backend)
            out.print(f"{backend} cluster down")
        else:
            out.print(format_status(cluster_status(backend)))
    except ClusterError as exc:
        err.print(f"[red]{exc}[/red]")
        raise typer.Exit(EXIT_ERROR) from None


def _print_comparison(variants: list[str], table: list[dict]) -> None:
    from rich import box
    from rich.table import Table as RichTable

    from reports.tables import delta_with_interval, fmt

    grid = RichTable(
        title=f"A = {variants[0]}, B = {variants[1]} (medians of the runs)",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    # The metric and its delta with the interval are the answer: never wrapped.
    grid.add_column("metric", no_wrap=True)
    grid.add_column("A", justify="right", min_width=6)
    grid.add_column("B", justify="right", min_width=6)
    grid.add_column("delta % [95% interval]", no_wrap=True)
    grid.add_column("q (BH)", justify="right", min_width=5)
    grid.add_column("verdict", no_wrap=True)
    for row in table:
        grid.add_row(
            row["metric"],
            fmt(row.get("a")),
            fmt(row.get("b")),
            delta_with_interval(row),
            "-" if row.get("q_value") is None else f"{row['q_value']:.2g}",
            str(row.get("verdict")),
        )
    out.print(grid)


def _print_summary(root: Path, result: dict) -> None:
    colour = {"valid": "green", "invalid": "red"}.get(result["verdict"], "yellow")
    out.print(f"[bold]{root}[/bold]: [{colour}]{result['verdict']}[/{colour}]")
    for name, check in result.get("checks", {}).items():
        out.print(f"  {name}: {check.get('verdict')}")
    if result.get("error"):
        out.print(f"  error: {result['error']}")
    mode = result.get("environment", {}).get("instant_mode", {})
    if mode.get("effective") != mode.get("requested"):
        out.print(
            f"  instant mode: {mode.get('requested')} asked, ran {mode.get('effective')} "
            "(COW upserts need blocking: safety.cow_upsert_blocking)"
        )
    restarts = result.get("metrics", {}).get("driver_restarts") or {}
    if restarts.get("count"):
        out.print(
            f"  driver restarts: {restarts['count']} (exit codes {restarts['exit_codes']}; "
            "logs/driver-N.log)"
        )
    tp = result.get("metrics", {}).get("throughput_rows_per_s")
    if isinstance(tp, dict) and tp.get("mean") is not None:
        out.print(f"  throughput: mean {tp['mean']:,.0f} rows/s, cv {tp.get('cv')}")


def main() -> None:
    app()
