"""Checks that a process-level fault took effect before it is recorded as applied."""

from __future__ import annotations

import time
from typing import Any

from harness.faults.kinds import FaultKind
from infra.cluster.procs import proc_state

STOPPED = ("T", "t")  # stopped by a signal / by tracing


def wait_stopped(pid: int, timeout_s: float = 2.0) -> str | None:
    """The process's state once it shows as stopped after SIGSTOP, None if it never did
    (it had exited, or no /proc to look at) within `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        state = proc_state(pid)
        if state in STOPPED:
            return state
        if state is None or time.monotonic() >= deadline:
            return None
        time.sleep(0.01)


def wait_resumed(pid: int, timeout_s: float = 2.0) -> str | None:
    """The process's state once it runs again after SIGCONT, None if it did not (it had
    exited, or still shows as stopped) within `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        state = proc_state(pid)
        if state is not None and state not in STOPPED:
            return state
        if state is None or time.monotonic() >= deadline:
            return None
        time.sleep(0.01)


def worker_effect(kind: str, worker: dict[str, Any]) -> bool:
    """Whether a cluster worker's status (infra.cluster backend status()['workers'][i])
    shows the fault: killed -> not alive; paused -> stopped (process) or paused (container)."""
    if kind == FaultKind.WORKER_KILL:
        return not worker.get("alive", True)
    if kind == FaultKind.WORKER_PAUSE:
        return worker.get("process_state") in STOPPED or worker.get("container_status") == "paused"
    return True
