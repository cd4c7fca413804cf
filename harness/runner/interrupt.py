"""SIGINT, SIGTERM and SIGHUP stop a run the same way (DESIGN.md, "Evidence rules").

Ctrl-C, `timeout`, a CI time-out, `docker stop` and systemd all mean "stop now". Each of
them raises `Interrupted` in the main thread, so the runner's `finally` blocks stop the
driver, its JVM and Python workers, the cluster, and write the partial result. While that
clean-up runs, further signals are held: a second Ctrl-C must not cut it short and leave
processes behind (it is bounded: see run_loop.INTERRUPT_STOP_S).
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """A run was stopped by a signal; `run_dir` is set once its partial result is written."""

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.run_dir: Any = None

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


def as_interrupted(exc: KeyboardInterrupt) -> Interrupted:
    """A plain KeyboardInterrupt (Python's own SIGINT handler) as Interrupted."""
    return exc if isinstance(exc, Interrupted) else Interrupted(signal.SIGINT)


def _raise(signum: int, _frame: object) -> None:
    raise Interrupted(signum)


@contextlib.contextmanager
def _handlers(handler: Any) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # signal handlers belong to the main thread
        return
    old = {s: signal.signal(s, handler) for s in SIGNALS}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@contextlib.contextmanager
def signals_interrupt() -> Iterator[None]:
    """Within: each of SIGNALS raises Interrupted in the main thread."""
    with _handlers(_raise):
        yield


class Held:
    """Signals that arrived while held: the first one counts."""

    def __init__(self) -> None:
        self.signum: int | None = None

    def __call__(self, signum: int, _frame: object) -> None:
        self.signum = self.signum or signum

    def arrived(self) -> bool:
        return self.signum is not None

    def take(self) -> Interrupted | None:
        """The held signal as Interrupted (then no longer held), or None."""
        signum, self.signum = self.signum, None
        return None if signum is None else Interrupted(signum)


@contextlib.contextmanager
def signals_held() -> Iterator[Held]:
    """Within: signals are noted, not raised. One that the block did not `take()` is
    raised when it ends (unless an exception already leaves the block)."""
    held = Held()
    with _handlers(held):
        yield held
    late = held.take()
    if late is not None:
        raise late
