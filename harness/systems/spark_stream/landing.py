"""The event feed for a system under test on Spark: source events landed as Parquet files.

Spark 3.5 (Hudi's runtime) has no Python data source, and a sink under test must not read
the engine's own source, so the runner lands the same events the engine's source
produces (harness.pipeline.events.generate, deterministic from (seed, offset)) as files,
and the system's pipeline reads the folder with Spark's file source. Once a tick
(1 s), one file per source partition holds the offsets the rate law says became due since
the last tick. A file is written under a hidden temporary name and renamed, so Spark's
file source (which skips names starting with "." or "_") never lists a half-written file.

File names carry (tick, partition, first offset, end offset), zero-padded so that they
sort in landing order and a file's offsets can be known from its name alone.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from harness.pipeline.events import EventSpec, generate, opening_balances
from harness.pipeline.rates import RateLaw
from harness.scenario import Scenario

OPENING_FILE = "opening-balances.parquet"
NAME_RE = re.compile(r"^(\d{9})-p(\d{4})-(\d{12})-(\d{12})\.parquet$")


@dataclass(frozen=True)
class LandedFile:
    """One landed file: the rows of `partition` among source offsets [start, end)."""

    name: str
    tick: int
    partition: int
    start: int
    end: int


def file_name(tick: int, partition: int, start: int, end: int) -> str:
    return f"{tick:09d}-p{partition:04d}-{start:012d}-{end:012d}.parquet"


def parse_name(name: str) -> LandedFile | None:
    """The landed file a name denotes; None for anything else (temporaries, Spark's files)."""
    match = NAME_RE.match(name)
    if match is None:
        return None
    tick, partition, start, end = (int(g) for g in match.groups())
    return LandedFile(name, tick, partition, start, end)


def write_atomically(table: pa.Table, folder: Path, name: str) -> Path:
    """Write `.name.tmp`, fsync it, then rename to `name`: readers see all of it or nothing."""
    tmp = folder / f".{name}.tmp"
    pq.write_table(table, tmp)
    with open(tmp, "rb") as handle:
        os.fsync(handle.fileno())
    final = folder / name
    os.replace(tmp, final)
    return final


def event_spec(scenario: Scenario) -> EventSpec:
    # One landed file a tick holds every source offset that fell due (partitions=1), so a
    # micro-batch reads one contiguous range of offsets, whatever files it picked up.
    src = scenario.source
    return EventSpec(
        mode=src.mode,
        seed=scenario.seed,
        partitions=1,
        keys=src.keys,
        accounts=src.accounts,
        payload_bytes=src.payload_bytes,
        file_groups=scenario.table.file_groups,
    )


def land_opening_balances(scenario: Scenario, folder: Path) -> str | None:
    """Bank mode: the accounts' opening balances as one Parquet file for the stream driver
    to commit before the stream (outside the landing folder: the stream never reads it)."""
    if scenario.source.mode != "bank":
        return None
    return str(write_atomically(opening_balances(event_spec(scenario)), folder, OPENING_FILE))


class Lander:
    """Lands due events into `folder` every `interval_s` until stopped.

    `land_due(elapsed_s)` is one step (the tests drive it directly); `start()` runs the
    steps on a thread of its own, on the monotonic clock, and `stop()` ends it.
    """

    def __init__(
        self,
        spec: EventSpec,
        law: RateLaw,
        folder: str | Path,
        interval_s: float = 1.0,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.spec = spec
        self.law = law
        self.folder = Path(folder)
        self.interval_s = interval_s
        self.folder.mkdir(parents=True, exist_ok=True)
        self._wall_clock = wall_clock
        self._wall0 = wall_clock()  # event times are epoch seconds from here (reset by start)
        self._offset = 0  # the next source offset to land
        self._elapsed = 0.0  # run second the landed offsets were due by
        self._tick = 0
        self._landed: list[LandedFile] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.error: BaseException | None = None  # a failed thread's cause, for the caller

    def offsets_landed(self) -> int:
        """Source offsets [0, n) are landed (every partition's rows of them)."""
        with self._lock:
            return self._offset

    def files(self) -> list[LandedFile]:
        with self._lock:
            return list(self._landed)

    def land_due(self, elapsed_s: float) -> list[LandedFile]:
        """Land the offsets due by second `elapsed_s` of the run that are not landed yet."""
        start = self._offset
        end = self.law.next_offset(start, elapsed_s)
        if end <= start:
            return []
        self._tick += 1
        t_start, t_end = self._wall0 + self._elapsed, self._wall0 + elapsed_s
        written = []
        for partition in range(self.spec.partitions):
            batch = generate(self.spec, partition, start, end, t_start, t_end)
            if batch.num_rows == 0:  # an empty file would only be one more file to list
                continue
            name = file_name(self._tick, partition, start, end)
            write_atomically(pa.Table.from_batches([batch]), self.folder, name)
            written.append(LandedFile(name, self._tick, partition, start, end))
        with self._lock:  # published only once every partition's file is in place
            self._offset, self._elapsed = end, elapsed_s
            self._landed.extend(written)
        return written

    def start(self) -> None:
        self._wall0 = self._wall_clock()  # second 0 of the law is now
        self._thread = threading.Thread(target=self._run, name="lander", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        t0 = time.monotonic()
        k = 1
        try:
            # Tick k lands what was due by k intervals; a slow tick is caught up, not skipped.
            while not self._stop.wait(max(0.0, t0 + k * self.interval_s - time.monotonic())):
                self.land_due(k * self.interval_s)
                k += 1
        except BaseException as exc:  # kept for the caller: a thread's error is otherwise lost
            self.error = exc
