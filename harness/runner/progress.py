"""The terminal progress display, on stderr (stdout stays for answers and --json documents).

A run shows one bar: elapsed / duration, rows/s, pending instants, faults. A job of several
runs (compare, nightly, capacity) wraps them in a JobProgress: one line above the run's bar
with run k of N, the job's elapsed time and the time left, and a status line while a run
is being analysed (checks on Spark take tens of seconds)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Column
from rich.text import Text

# The job whose runs are under way: run_scenario's RunProgress joins its display, so the
# jobs need not thread a display object through the runner.
_current_job: ContextVar[JobProgress | None] = ContextVar("instantbench_job", default=None)


def current_job() -> JobProgress | None:
    """The job whose run is under way in this context, if any."""
    return _current_job.get()


def _clock(seconds: float) -> str:
    hours, rest = divmod(max(round(seconds), 0), 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class JobProgress:
    """Run k of N, elapsed, time left. The estimate is each remaining run's measured
    seconds (scenario run_s) plus the mean overhead (Spark start-up, stopping, analysis)
    of the runs done so far; before the first run is done the overhead is unknown, so
    the estimate is a lower bound ("at least").

    `run_s` lists the planned runs' measured seconds in order; `at_most` when runs may be
    skipped (capacity stops a configuration at its first failing rate): "run 3 of at most
    12, up to about 9:00 left"."""

    def __init__(
        self,
        label: str,
        run_s: list[float],
        quiet: bool,
        at_most: bool = False,
        console: Console | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label, self.run_s, self.quiet, self.at_most = label, list(run_s), quiet, at_most
        self._clock = clock
        self._start = clock()
        self._done = 0
        self._overheads: list[float] = []
        self._run_started: float | None = None
        self._status = ""
        self._run_display: RenderableType | None = None
        self.console = console or Console(stderr=True)
        self._live = Live(
            _Dynamic(self.renderable), console=self.console, refresh_per_second=2, transient=False
        )

    def __enter__(self) -> JobProgress:
        self._token = _current_job.set(self)
        if not self.quiet:
            self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        _current_job.reset(self._token)
        if not self.quiet:
            self._live.stop()

    @contextmanager
    def run(self, name: str) -> Iterator[None]:
        """Around one run of the job: times it for the estimate; a line when it is done."""
        started = self._run_started = self._clock()
        self._status = ""
        try:
            yield
        finally:
            took = self._clock() - started
            planned = self.run_s[min(self._done, len(self.run_s) - 1)] if self.run_s else 0.0
            self._overheads.append(max(took - planned, 0.0))
            self._done += 1
            self._run_started, self._status, self._run_display = None, "", None
            if not self.quiet:
                self.console.print(
                    f"run {self._done} of {len(self.run_s)} done: {name} ({_clock(took)})",
                    highlight=False,
                    markup=False,
                )

    def status(self, text: str) -> None:
        """The line under the run's bar, e.g. "checks: exactly_once on spark"."""
        self._status = text

    def show_run(self, display: RenderableType | None) -> None:
        self._run_display = display

    def remaining_s(self) -> float:
        overhead = sum(self._overheads) / len(self._overheads) if self._overheads else 0.0
        left = sum(s + overhead for s in self.run_s[self._done :])
        if self._run_started is not None:
            left -= self._clock() - self._run_started
            # a run past its estimate: at least the runs after it are left
            left = max(left, sum(s + overhead for s in self.run_s[self._done + 1 :]))
        return max(left, 0.0)

    def describe(self) -> str:
        total = len(self.run_s)
        k = min(self._done + (self._run_started is not None), total)
        of = f"at most {total}" if self.at_most else str(total)
        bound = "about" if self._overheads else "at least"
        if self.at_most:  # neither bound holds when runs may be skipped
            bound = "up to about"
        return (
            f"{self.label}: run {k} of {of}, elapsed {_clock(self._clock() - self._start)}, "
            f"{bound} {_clock(self.remaining_s())} left"
        )

    def renderable(self) -> RenderableType:
        """What the display shows now: the job's line, the run's bar, the status line."""
        parts: list[RenderableType] = [Text(self.describe(), style="bold")]
        if self._run_display is not None:
            parts.append(self._run_display)
        if self._status:
            parts.append(Text(f"  {self._status}", style="dim"))
        return Group(*parts)


class _Dynamic:
    """A renderable that asks for its content at each refresh of the Live display."""

    def __init__(self, render: Callable[[], RenderableType]) -> None:
        self._render = render

    def __rich__(self) -> RenderableType:
        return self._render()


class RunProgress:
    def __init__(self, label: str, total_s: float, quiet: bool) -> None:
        self.quiet = quiet
        self._job = current_job()
        console = self._job.console if self._job is not None else Console(stderr=True)
        # On a narrow terminal the run's long name wraps; the figures are never cut.
        fixed = Column(no_wrap=True)
        self._progress = Progress(
            TextColumn("[bold]{task.description}", table_column=Column(overflow="fold")),
            BarColumn(bar_width=20, table_column=fixed),
            TextColumn("{task.completed:>4.0f}/{task.total:.0f}s", table_column=fixed),
            TimeElapsedColumn(table_column=fixed),
            TextColumn("{task.fields[stats]}", table_column=Column(overflow="fold")),
            console=console,
            transient=False,
            disable=quiet,
        )
        self._task = self._progress.add_task(label, total=total_s, stats="starting Spark...")

    def __enter__(self) -> RunProgress:
        if self._job is not None:  # drawn inside the job's display, under its line
            self._job.show_run(None if self.quiet else self._progress)
        else:
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._job is None:
            self._progress.stop()

    def update(self, elapsed_s: float, rows_per_s: float, pending: int, faults: list[str]) -> None:
        stats = f"{rows_per_s:>9,.0f} rows/s  pending {pending}"
        if faults:
            stats += "  [red]faults: " + ", ".join(faults)
        self._progress.update(self._task, completed=elapsed_s, stats=stats)

    def print(self, text: str) -> None:
        """A line above the bar (on stderr, like the bar; nothing when quiet)."""
        if not self.quiet:
            self._progress.console.print(text, highlight=False)

    def note(self, text: str) -> None:
        self._progress.update(self._task, stats=text)

    def phase(self, text: str) -> None:
        """What the analysis after the run is doing: the job's status line, or (a single
        run, its bar already finished) one line on stderr."""
        if self._job is not None:
            self._job.status(text)
        elif not self.quiet:
            self._progress.console.print(f"  {text}", style="dim", highlight=False)
