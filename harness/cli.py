"""`instantbench`: the command line (DESIGN.md, "CLI"). Exit codes: 0 valid, 1 invalid, 2 error."""

from __future__ import annotations

import contextlib
import functools
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TextIO, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from harness.cli_usage import OneLineUsageErrors
from harness.scenario import ScenarioError, expand_matrix, load_scenario
from harness.scenario.base import MAX_COUNT, MAX_PARALLEL

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.table import Table as RichTable

    from harness.scenario import Scenario

# Bad input and errors; verdicts map to exit codes in harness.checks.verdict.exit_code
# (imported where used: harness.checks is slow to import for a CLI that only validates).
EXIT_ERROR = 2

# add_completion: `instantbench --install-completion` (bash, zsh, fish, PowerShell).
app = typer.Typer(
    cls=OneLineUsageErrors,  # usage errors: one line, exit 2 (harness/cli_usage.py)
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


@contextlib.contextmanager
def _documents_only(json_: bool) -> Iterator[TextIO]:
    """With --json, stdout carries the result documents only: whatever else is printed
    meanwhile goes to stderr. Yields the real stdout, for the documents."""
    stdout = sys.stdout
    with contextlib.redirect_stdout(sys.stderr) if json_ else contextlib.nullcontext():
        yield stdout


def examples(*commands: str) -> str:
    """A command's `--help` epilog: one example per paragraph (rich joins single lines)."""
    return "Examples:\n\n" + "\n\n".join(f"  $ {c}" for c in commands)


def _fail(message: object) -> NoReturn:
    """Exit 2 with the message verbatim on stderr, one line per problem (no terminal markup:
    a `[x]` in a path or an allowed pattern must stay as it is)."""
    for line in str(message).splitlines() or [""]:
        typer.echo(line, err=True)
    raise typer.Exit(EXIT_ERROR)


Command = TypeVar("Command", bound=Callable)


def _stops_cleanly(command: Command) -> Command:
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
            _fail(f"interrupted by {stopped.name}{where if stopped.run_dir else ''}")
        except ClusterError as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            _fail(f"cluster: {first}")
        except RunError as exc:  # could not start: no run directory, no table
            _fail(" ".join(str(exc).split()))

    return guarded  # type: ignore[return-value]


def _load(path: Path, overrides: list[str] | None) -> Scenario:
    try:
        return load_scenario(path, overrides or [])
    except ScenarioError as exc:
        _fail(exc)


@app.command(
    epilog=examples(
        "instantbench validate scenarios/smoke.yaml",
        "instantbench validate scenarios/smoke.yaml --set engine.instant_mode=blocking",
    )
)
def validate(scenario: ScenarioArg, set_: SetOpt = None) -> None:
    """Parse and check a scenario file without running it."""
    loaded = _load(scenario, set_)
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
        _fail(f"schema: unknown kind {kind!r}; allowed: {' | '.join(SCHEMAS)}")
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
@_stops_cleanly
def run(
    scenario: ScenarioArg,
    out_dir: Annotated[Path, typer.Option("--out", help="where run directories go")] = Path("runs"),
    set_: SetOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="no progress display")] = False,
    json_: JsonOpt = False,
) -> None:
    """Run a scenario (each matrix variant once) and check it.

    With --json, stdout carries each variant's result.json, one document per line."""
    # The CLI is the shell over every layer: the runner (pyspark) and the reports.
    from harness.checks.verdict import worst_exit_code
    from harness.runner.run import run_scenario
    from reports import render_run

    loaded = _load(scenario, set_)
    verdicts: list[str] = []
    with _documents_only(json_) as stdout:
        for variant, resolved in expand_matrix(loaded):
            outcome = run_scenario(resolved, out_dir, variant or None, quiet)
            render_run(outcome.paths.root)
            verdicts.append(outcome.verdict)
            if json_:
                print(json.dumps(outcome.result, default=str), file=stdout, flush=True)
            _print_summary(outcome.paths.root, outcome.result, err if json_ else out)
    raise typer.Exit(worst_exit_code(verdicts))


@app.command(epilog=examples("instantbench report runs/smoke-20260101T120000"))
def report(run_dir: Annotated[Path, typer.Argument(help="a run directory")]) -> None:
    """Render report.html and report.md of a run directory (from its result files)."""
    from harness.checks.verdict import EXIT_CODES
    from reports import render_run

    if not (run_dir / "result.json").is_file():
        _fail(f"{run_dir}: not a run directory (no result.json)")
    try:
        result = json.loads((run_dir / "result.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
        _fail(f"{run_dir / 'result.json'}: not readable as JSON ({' '.join(str(exc).split())})")
    if not isinstance(result, dict) or result.get("verdict") not in EXIT_CODES:
        _fail(f"{run_dir / 'result.json'}: not a run result (needs verdict valid|invalid|unknown)")
    try:
        html, md = render_run(run_dir)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        # A run directory whose result files were damaged or cut short.
        _fail(f"{run_dir}: cannot render its result files ({type(exc).__name__}: {exc})")
    out.print(f"{html}\n{md}", markup=False)


@app.command(
    epilog=examples(
        "instantbench compare scenarios/blocking-vs-async.yaml --repeat 3",
        "instantbench compare scenarios/smoke.yaml --axis engine.instant_mode=blocking,async",
        "instantbench compare scenarios/blocking-vs-async.yaml --json > compare.json",
    )
)
@_stops_cleanly
def compare(
    scenario: ScenarioArg,
    axis: Annotated[
        str | None, typer.Option(help="compare along KEY=V1,V2 instead of the matrix")
    ] = None,
    repeat: Annotated[
        int | None, typer.Option(help="repetitions per variant", min=1, max=MAX_COUNT)
    ] = None,
    out_dir: Annotated[Path, typer.Option("--out", help="where results go")] = Path("runs"),
    set_: SetOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="no progress display")] = False,
    json_: JsonOpt = False,
) -> None:
    """Run two variants with interleaved repetitions and compare them statistically.

    With --json, stdout carries the comparison's compare.json."""
    from harness.checks.verdict import worst_exit_code
    from harness.jobs.compare import run_comparison, spark_lines, with_axis
    from reports import render_comparison, render_run

    loaded = _load(scenario, set_)
    if axis:
        try:
            loaded = with_axis(loaded, axis)
        except ScenarioError as exc:
            _fail(exc)
    try:
        with _documents_only(json_) as stdout:
            result = run_comparison(
                loaded, out_dir, repeat, quiet, on_run=lambda o: render_run(o.paths.root)
            )
    except ValueError as exc:
        _fail(exc)
    dirs = {v: [o.paths.root for o in outs] for v, outs in result.runs.items()}
    lines = spark_lines(result.runs)
    page = render_comparison(dirs, result.out_dir, result.table, lines)
    if json_:
        print((result.out_dir / "compare.json").read_text().strip(), file=stdout, flush=True)
    else:
        labels = [f"{v} [{lines[v]}]" if lines.get(v) else v for v in result.variants]
        _print_comparison(labels, result.table)
        out.print(f"[bold]{escape(str(page))}[/bold]")
    # No verdicts at all proves nothing: fail closed.
    raise typer.Exit(worst_exit_code(result.verdicts, empty=EXIT_ERROR))


@app.command(
    epilog=examples(
        "instantbench nightly scenarios/suites/nightly.yaml --store runs/nightly",
        "duckdb -c \"select * from 'runs/nightly/*.parquet'\"",
    )
)
@_stops_cleanly
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
        _fail(exc)
    page = render_nightly(result.out_dir)
    for finding in result.regressions:
        out.print(f"[red]regression[/red] {escape(str(finding))}")
    for run in result.runs:  # a suite entry's `expect` the run did not meet
        if run.missed:
            out.print(f"[red]missed[/red] {escape(f'{run.run_id}: {run.missed}')}")
    out.print(f"[bold]{escape(str(page))}[/bold]")
    raise typer.Exit(result.exit_code)


@app.command(
    epilog=examples(
        "instantbench capacity scenarios/smoke.yaml --rates 5000,10000,20000",
        "instantbench capacity scenarios/smoke.yaml --writers 1,2 --intervals 1,2 --users ''",
    )
)
@_stops_cleanly
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
        _fail(exc)
    page = render_capacity(result.out_dir)
    out.print(result.recommendation, markup=False)
    out.print(f"[bold]{escape(str(page))}[/bold]")
    raise typer.Exit(result.exit_code)


Backend = Annotated[str, typer.Option("--backend", help="standalone | docker")]


@app.command(
    epilog=examples(
        "instantbench cluster up --backend standalone --workers 2",
        "instantbench cluster status --backend standalone",
        "instantbench cluster down --backend standalone",
    )
)
@_stops_cleanly
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

    if action not in ("up", "down", "status") or backend not in ("standalone", "docker"):
        _fail(
            f"cluster {action} --backend {backend}: allowed actions up | down | status, "
            "backends standalone | docker"
        )
    if action == "up":  # a ClusterError: exit 2, one line (_stops_cleanly)
        info = cluster_up(backend, workers, cores_per_worker, mounts=mount)
        out.print(f"{backend} cluster up: {info.master_url}", markup=False)
    elif action == "down":
        cluster_down(backend)
        out.print(f"{backend} cluster down", markup=False)
    else:
        out.print(format_status(cluster_status(backend)), markup=False)


def _print_comparison(variants: list[str], table: list[dict], console: Console = out) -> None:
    _print_whole(console, _comparison_table(variants, table))


def _print_whole(console: Console, grid: RenderableType) -> None:
    """A table at its natural width even on a narrower terminal (which then wraps the
    lines): rich would otherwise shorten a metric's name to fit, fold a number into two
    lines (0.003 over 7) or drop columns."""
    from rich.measure import Measurement
    from rich.segment import Segments

    unbounded = console.options.update(max_width=10_000)
    width = max(console.width, Measurement.get(console, unbounded, grid).maximum)
    lines = console.render(grid, console.options.update_width(width))
    console.print(Segments(lines), soft_wrap=True)  # soft_wrap: the lines are not cropped


def _comparison_table(variants: list[str], table: list[dict]) -> RichTable:
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
    return grid


def _print_summary(root: Path, result: dict, console: Console) -> None:
    colour = {"valid": "green", "invalid": "red"}.get(result["verdict"], "yellow")
    console.print(f"[bold]{escape(str(root))}[/bold]: [{colour}]{result['verdict']}[/{colour}]")
    for name, check in result.get("checks", {}).items():
        console.print(f"  {name}: {check.get('verdict')}", markup=False)
    if result.get("error"):
        console.print(f"  error: {result['error']}", markup=False)
    mode = result.get("environment", {}).get("instant_mode", {})
    if mode.get("effective") != mode.get("requested"):
        console.print(
            f"  instant mode: {mode.get('requested')} asked, ran {mode.get('effective')} "
            "(COW upserts need blocking: safety.cow_upsert_blocking)"
        )
    restarts = result.get("metrics", {}).get("driver_restarts") or {}
    if restarts.get("count"):
        console.print(
            f"  driver restarts: {restarts['count']} (exit codes {restarts['exit_codes']}; "
            "logs/driver-N.log)"
        )
    tp = result.get("metrics", {}).get("throughput_rows_per_s")
    if isinstance(tp, dict) and tp.get("mean") is not None:
        cv = tp.get("cv")
        cv_text = "n/a" if cv is None else f"{cv:.3g}"
        console.print(f"  throughput: mean {tp['mean']:,.0f} rows/s, cv {cv_text}")


def main() -> None:
    app()
