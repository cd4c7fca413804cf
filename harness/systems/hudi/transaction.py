"""A batch writer's transfers as its client sees them: one transaction retried while its
commit is refused for a concurrent one, reported as one `txn` JSON line, and the wait
between transactions. Standard library only: Hudi's batch_writer.py (on the Hudi
runtime's python) imports it from beside it, the formats' batch writer as a module.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from typing import Any

try:  # imported as a module of the project
    from harness.systems.hudi.script_io import emit, java_error
except ImportError:  # beside a script run by the Hudi runtime's python
    from script_io import emit, java_error  # type: ignore[no-redef]


def transfer(
    execute: Callable[[int, int, int], object],
    outcome_of: Callable[[str], str],
    cfg: dict[str, Any],
    rng: random.Random,
) -> None:
    """Move a random amount between two random accounts with `execute(source, target,
    amount)`; `outcome_of(text)`, given the failure's Java exception and its causes, says
    whether it is a conflict (retried, up to `max_attempts`) or an error (indeterminate: it
    may have committed)."""
    source, target = rng.sample(range(int(cfg["accounts"])), 2)
    amount = rng.randint(1, 50)
    started, attempts, outcome, error = time.time(), 0, "error", None
    while attempts < int(cfg.get("max_attempts", 5)):
        attempts += 1
        try:
            execute(source, target, amount)
            outcome, error = "ok", None
            break
        except Exception as exc:  # the JVM's exception, through py4j
            error = java_error(exc)[:500]
            outcome = outcome_of(f"{error}\n{exc}")  # py4j's text holds every cause
            if outcome != "conflict":
                break
    emit(
        "txn",
        writer=cfg["writer"],
        op="transfer",
        outcome=outcome,
        attempts=attempts,
        accounts=[source, target],
        amount=amount,
        started=started,
        latency_ms=round((time.time() - started) * 1000, 1),
        error=error,
    )


def stopped(stop_file: str, wait_s: float) -> bool:
    """Wait `wait_s` between transactions; True as soon as the stop file appears."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if os.path.exists(stop_file):
            return True
        time.sleep(0.05)
    return os.path.exists(stop_file)
