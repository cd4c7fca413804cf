"""The terminal progress display: elapsed / duration, rows/s, pending instants, faults."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn


class RunProgress:
    def __init__(self, label: str, total_s: float, quiet: bool) -> None:
        self.quiet = quiet
        self._progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            TextColumn("{task.completed:>4.0f}/{task.total:.0f}s"),
            TimeElapsedColumn(),
            TextColumn("{task.fields[stats]}"),
            console=Console(stderr=True),
            transient=False,
            disable=quiet,
        )
        self._task = self._progress.add_task(label, total=total_s, stats="starting Spark...")

    def __enter__(self) -> RunProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc) -> None:
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
