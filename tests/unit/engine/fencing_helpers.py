"""The zombie setup the fencing tests share (engine/table/fencing.py).

A pause is forced, never waited for: the zombie's thread blocks at a named seam until the
test lets it go. The successor takes the lock the way a real one does: the zombie does not
renew (it is paused) and the successor's lease observer runs on a stepped fake clock.
`Takeover` is the whole story of a zombie coordinator: its epoch, its table handle, its
call paused at a seam, the successor's epoch and handle, the zombie's resumption."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from engine.config import Safety, TableConfig
from engine.locks.file import FileLock
from engine.stream.state import EpochStore
from engine.table import Table
from engine.table.fence_domains import epoch_scope
from engine.timeline.active import TIMELINE_DIR
from tests.unit.engine.engine_helpers import rows

LEASE_S = 5.0
WAIT_S = 10.0
T = TypeVar("T")


def _stepping_clock() -> Callable[[], float]:
    """Each read is a lease later: a waiter sees an unrenewed lease expire on its 2nd look."""
    ticks = itertools.count(step=LEASE_S)
    return lambda: float(next(ticks))


def time_never_moves() -> float:
    return 0.0


class Seam:
    """Blocks the first thread that reaches it until released (SIGSTOP ... SIGCONT)."""

    def __init__(self) -> None:
        self.reached, self.go = threading.Event(), threading.Event()
        self._armed = True

    def __call__(self, *_: object) -> None:
        if self._armed:
            self._armed = False
            self.reached.set()
            assert self.go.wait(WAIT_S)


class Zombie(threading.Thread):
    """Runs one table call in a thread; keeps its result or error."""

    def __init__(self, call: Callable[[], object]) -> None:
        super().__init__(daemon=True)
        self.call: Callable[[], object] = call
        self.result: Any = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.result = self.call()
        except BaseException as e:
            self.error = e

    def finish(self) -> BaseException | None:
        self.join(WAIT_S)
        assert not self.is_alive()
        return self.error


def open_writer(path: str, safety: Safety, *, paused: bool, name: str, skew: int = 1) -> Table:
    """A writer with its own lease on the table lock. A `paused` one never renews (its
    process is stopped); the other judges expiry on a stepping clock."""
    table = Table.open(path, safety=safety, max_skew_ms=skew, writer_id=name)
    table.lock = FileLock(
        table.storage,
        holder_id=name,
        lease_s=LEASE_S,
        renew=not paused,
        monotonic=time_never_moves if paused else _stepping_clock(),
        on_takeover=table.fence.revoke,
    )
    table.generator.lock = table.lock
    return table


def completed_files(table: Table, t: str) -> list[str]:
    """The completed files of requested instant `t` (two: a double commit)."""
    names = table.storage.list(TIMELINE_DIR)
    return sorted(n for n in names if n.startswith(f"{t}_"))


def pause_at(
    table: Table, seam: Callable[[], None], point: str, path_is: str | None = None
) -> None:
    """Call `seam` when `table` reaches fence seam `point` (of the file `path_is`, if given)."""
    table.fence.hooks.append(
        lambda p, info: p == point and (path_is is None or info.get("path") == path_is) and seam()
    )


def pause_in_truetime(table: Table, seam: Callable[[float], None]) -> None:
    table.generator._sleep = seam  # the TrueTime wait, under the lock


class Takeover:
    """A zombie coordinator (epoch `old`, a lease it never renews) stopped at `seam` in a
    call, and its successor (epoch `new`, which takes the lock over once the lease ran
    out). Usage: set the seam, `start(call)`, `take_over()`, act as the successor,
    `resume()` (the zombie's error)."""

    def __init__(self, path: str, safety: Safety | None = None) -> None:
        self.path, self.safety = path, safety or Safety()
        self.epochs = EpochStore(Table.open(path).storage)
        self.old = self.epochs.advance()
        self.new: int | None = None
        self.zombie = open_writer(path, self.safety, paused=True, name="zombie")
        self.seam = Seam()
        self._thread: Zombie | None = None

    def as_zombie(self, call: Callable[[], T]) -> T:
        with epoch_scope(self.old):
            return call()

    def as_successor(self, call: Callable[[], T]) -> T:
        assert self.new is not None, "take_over first"
        with epoch_scope(self.new):
            return call()

    def pause_at(self, point: str, path_is: str | None = None) -> None:
        pause_at(self.zombie, self.seam, point, path_is)

    def pause_in_truetime(self) -> None:
        pause_in_truetime(self.zombie, self.seam)

    def start(self, call: Callable[[], object]) -> None:
        """Run `call` as the zombie in a thread until it stops at the seam."""
        self._thread = Zombie(lambda: self.as_zombie(call))
        self._thread.start()
        assert self.seam.reached.wait(WAIT_S), "the zombie never reached its seam"

    def take_over(self) -> Table:
        """A new driver: the next epoch (sealing the zombie's), and a handle that takes the
        table lock over once the stopped zombie's lease ran out."""
        self.new = self.epochs.advance()
        self.successor = open_writer(self.path, self.safety, paused=False, name="successor")
        return self.successor

    def resume(self) -> BaseException | None:
        """Let the zombie go on; its error (None if its call went through)."""
        assert self._thread is not None
        self.seam.go.set()
        return self._thread.finish()

    @property
    def result(self) -> Any:
        assert self._thread is not None
        return self._thread.result


def new_table(root: str, config: TableConfig | None = None) -> str:
    """Create the table the fencing tests share at `root` (a local folder or an S3 store)."""
    config = config or TableConfig(file_groups=2)
    Table.create(root, config, rows([0]).schema, max_skew_ms=0).close()
    return root
