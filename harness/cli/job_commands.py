"""The commands that run many runs or a cluster: compare, nightly, capacity, cluster."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from harness.cli.app import (
    EXIT_ERROR,
    JsonOpt,
    QuietOpt,
    ScenarioArg,
    SetOpt,
    app,
    documents_only,
    examples,
    fail,
    load,
    out,
    stops_cleanly,
)
from harness.cli.tables import print_comparison
from harness.scenario import ScenarioError
from harness.scenario.base import MAX_COUNT, MAX_PARALLEL


@app.command(
    epilog=examples(
        "instantbench compare scenarios/blocking-vs-async.yaml --repeat 3",
        "instantbench compare scenarios/smoke.yaml --axis engine.instant_mode=blocking,async",
        "instantbench compare scenarios/blocking-vs-async.yaml --json > compare.json",
    )
)
@stops_cleanly
def compare(
    scenario: ScenarioArg,
    axis: Annotated[
        str | None, typer.Option(help="compare along KEY=V1,V2[,V3...] instead of the matrix")
    ] = None,
    repeat: Annotated[
        int | None, typer.Option(help="repetitions per variant", min=1, max=MAX_COUNT)
    ] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="where results go")] = Path("runs"),
    set_: SetOpt = None,
    quiet: QuietOpt = False,
    json_: JsonOpt = False,
) -> None:
    """Run two or more variants with interleaved repetitions and compare every pair
    statistically.

    With --json, stdout carries the comparison's compare.json."""
    from harness.checks.verdict import worst_exit_code
    from harness.jobs.compare import run_comparison, with_axis
    from reports import render_comparison, render_run

    loaded = load(scenario, set_)
    if axis:
        try:
            loaded = with_axis(loaded, axis)
        except ScenarioError as exc:
            fail(exc)
    try:
        with documents_only(json_) as stdout:
            result = run_comparison(
                loaded, out_dir, repeat, quiet, on_run=lambda o: render_run(o.paths.root)
            )
    except ValueError as exc:
        fail(exc)
    dirs = {v: [o.paths.root for o in outs] for v, outs in result.runs.items()}
    lines = result.spark_lines
    page = render_comparison(dirs, result.out_dir, result.tables, lines)
    if json_:
        print((result.out_dir / "compare.json").read_text().strip(), file=stdout, flush=True)
    else:
        labels = {v: f"{v} [{lines[v]}]" if lines.get(v) else v for v in result.variants}
        print_comparison(result.tables, labels, level_pct=result.level_pct)
        for line in result.conclusions(loaded.compare.decide):
            out.print(escape(f"{line['pair']}: {line['text']}"), soft_wrap=True)
        if result.stopped and loaded.compare.decide:
            out.print(escape(f"stopped: {result.stopped}"))
        out.print(f"[bold]{escape(str(page))}[/bold]")
    # No verdicts at all proves nothing: fail closed.
    raise typer.Exit(worst_exit_code(result.verdicts, empty=EXIT_ERROR))


@app.command(
    epilog=examples(
        "instantbench nightly scenarios/suites/nightly.yaml --store runs/nightly",
        "duckdb -c \"select * from 'runs/nightly/*.parquet'\"",
    )
)
@stops_cleanly
def nightly(
    suite: Annotated[Path, typer.Argument(help="suite YAML (scenarios/suites/)")],
    store: Annotated[Path, typer.Option(help="results store (Parquet, query with SQL)")] = Path(
        "runs/nightly"
    ),
    quiet: QuietOpt = False,
) -> None:
    """Run a suite, append results to the store, flag regressions against its history."""
    _night(suite, store, quiet, with_matrix=None)


@app.command(
    epilog=examples(
        "instantbench matrix scenarios/suites/formats.yaml --store runs/nightly",
    )
)
@stops_cleanly
def matrix(
    suite: Annotated[Path, typer.Argument(help="suite YAML with a system axis")],
    store: Annotated[Path, typer.Option(help="results store (Parquet, query with SQL)")] = Path(
        "runs/nightly"
    ),
    quiet: QuietOpt = False,
) -> None:
    """Run a suite across systems as a night and render its fault x system table."""
    _night(suite, store, quiet, with_matrix=True)


def _night(suite: Path, store: Path, quiet: bool, with_matrix: bool | None) -> None:
    """A suite run as a night: its pages (nightly.html, and the matrix's: always, or with
    None where the night ran more than one system), what regressed and which runs missed
    their entry's expectation; exits with the night's code."""
    from harness.jobs.nightly import run_nightly
    from harness.jobs.suite import SuiteError
    from reports import render_run
    from reports.matrix_report import render_matrix, systems_of
    from reports.nightly_report import render_nightly

    try:
        result = run_nightly(suite, store, quiet, on_run=lambda o: render_run(o.paths.root))
    except SuiteError as exc:
        fail(exc)
    pages = [render_nightly(result.out_dir)]
    if with_matrix or (with_matrix is None and len(systems_of(result.out_dir)) > 1):
        pages += render_matrix(result.out_dir)
    for finding in result.regressions:
        out.print(f"[red]regression[/red] {escape(str(finding))}")
    for run in result.runs:  # a suite entry's `expect` the run did not meet
        if run.missed:
            out.print(f"[red]missed[/red] {escape(f'{run.run_id}: {run.missed}')}")
    for page in pages:
        out.print(f"[bold]{escape(str(page))}[/bold]")
    raise typer.Exit(result.exit_code)


@app.command(
    epilog=examples(
        "instantbench capacity scenarios/smoke.yaml --rates 5000,10000,20000",
        "instantbench capacity scenarios/smoke.yaml --writers 1,2 --intervals 1,2 --users ''",
    )
)
@stops_cleanly
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
    quiet: QuietOpt = False,
) -> None:
    """Find the highest ingest rate that holds the SLO; measure OCC contention with Locust."""
    from harness.jobs.capacity import CapacityGrid, run_capacity
    from reports import render_run
    from reports.capacity_report import render_capacity

    loaded = load(scenario, set_)
    try:
        grid = CapacityGrid.parse(rates=rates, writers=writers, intervals=intervals, users=users)
        result = run_capacity(
            loaded, out_dir, quiet, grid, on_run=lambda o: render_run(o.paths.root)
        )
    except ValueError as exc:
        fail(exc)
    page = render_capacity(result.out_dir)
    out.print(result.recommendation, markup=False)
    out.print(f"[bold]{escape(str(page))}[/bold]")
    raise typer.Exit(result.exit_code)


Backend = Annotated[str, typer.Option("--backend", help="standalone | docker | hosts")]


@app.command(
    epilog=examples(
        "instantbench cluster up --backend standalone --workers 2",
        "instantbench cluster status --backend standalone",
        "instantbench cluster down --backend standalone",
        "instantbench cluster up --backend hosts --workers 2",
    )
)
@stops_cleanly
def cluster(
    action: Annotated[str, typer.Argument(help="up | down | status")],
    backend: Backend = "standalone",
    workers: Annotated[int, typer.Option(help="workers (up)", min=1, max=MAX_PARALLEL)] = 2,
    cores_per_worker: Annotated[
        int, typer.Option(help="cores per worker (up)", min=1, max=MAX_PARALLEL)
    ] = 1,
    mount: Annotated[
        list[Path] | None, typer.Option(help="docker: directories mounted at the same path")
    ] = None,
) -> None:
    """Start, stop or inspect a Spark cluster by hand (the state is kept for `down`)."""
    from infra.cli import cluster_down, cluster_status, cluster_up, format_status
    from infra.cluster import BACKENDS

    if action not in ("up", "down", "status") or backend not in BACKENDS:
        fail(
            f"cluster {action} --backend {backend}: allowed actions up | down | status, "
            f"backends {' | '.join(BACKENDS)}"
        )
    if action == "up":  # a ClusterError: exit 2, one line (stops_cleanly)
        info = cluster_up(backend, workers, cores_per_worker, mounts=mount)
        out.print(f"{backend} cluster up: {info.master_url}", markup=False)
    elif action == "down":
        cluster_down(backend)
        out.print(f"{backend} cluster down", markup=False)
    else:
        out.print(format_status(cluster_status(backend)), markup=False)
