"""Crashes are recorded once the process is seen dead, not when it decides to die.

writer_crash: a writer task hard-exits at a seam of its first attempt; the retry Spark
runs for it records the fault, which proves the process died and the task failed (an exit
Spark never noticed, or a crash point never reached, leaves no retry and no record).
coordinator_crash: the driver SIGKILLs itself at a seam; the runner records the fault
when it sees that driver exit by SIGKILL."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from typing import Any

from harness.faults.evidence import record_fault
from harness.faults.fired import FiredLog
from harness.faults.schedule import Occurrence
from harness.history import HistoryWriter
from harness.scenario.faults import CoordinatorCrash

CRASH_EXIT_CODE = 137


def exited(label: str) -> str:
    return f"{label}.exited"


def retried(label: str) -> str:
    return f"{label}.retried"


def missed(label: str) -> str:
    return f"{label}.missed"


def writer_crash_hook(
    crash_points: dict[int, tuple[str, str]],
    task: int,
    attempt: int,
    batch_id: int,
    history: HistoryWriter,
    fired: FiredLog,
) -> Callable[[str, dict[str, Any]], None]:
    """The WriterTask fault hook: exit the Python worker at this task's crash point
    (first attempt only), after noting where, so the retry can record the fault."""
    point, label = crash_points.get(task, (None, None)) if attempt == 0 else (None, None)

    def hook(name: str, info: dict[str, Any]) -> None:
        if name == point and label is not None:
            history.record(
                "writer_crash_point",
                label=label,
                task=task,
                attempt=attempt,
                point=name,
                pid=os.getpid(),
                batch_id=batch_id,
                instant=info.get("instant"),
            )
            fired.mark(exited(label))
            os._exit(CRASH_EXIT_CODE)  # a hard exit of the Python worker: Spark retries

    return hook


def record_writer_retry(
    crash_points: dict[int, tuple[str, str]],
    task: int,
    attempt: int,
    batch_id: int,
    elapsed_s: float,
    history: HistoryWriter,
    fired: FiredLog,
) -> None:
    """Called at the start of every writer task: the first retry of a task that exited at
    its crash point records the writer_crash fault."""
    point, label = crash_points.get(task, (None, None))
    if attempt == 0 or label is None or not fired.fired(exited(label)):
        return
    if not fired.mark(retried(label)):
        return
    history.record(
        "fault",
        fault_kind="writer_crash",
        label=label,
        target=f"writer:{task}",
        start_s=round(elapsed_s, 3),
        end_s=round(elapsed_s, 3),
        applied=True,
        evidence={
            "task": task,
            "attempt": 0,  # the attempt that exited
            "exit_code": CRASH_EXIT_CODE,
            "point": point,
            "batch_id": batch_id,
            "retry_attempt": attempt,
            "retry_pid": os.getpid(),
        },
    )


def mark_missed_crashes(crash_points: dict[int, tuple[str, str]], fired: FiredLog) -> None:
    """After every task of a batch finished: a crash armed for it whose worker never
    exited never will (only first attempts crash), so the run need not wait for its retry."""
    for _, label in crash_points.values():
        if not fired.fired(exited(label)):
            fired.mark(missed(label))


def mark_orphaned_crashes(labels: list[str], fired: FiredLog) -> None:
    """At a driver's start: a crash an earlier driver armed whose retry never came died
    with that driver's batch (its tasks went with its executors), so no retry will record
    it, and the run need not wait its settle limit for one."""
    for label in labels:
        if fired.fired(label) and not fired.fired(retried(label)):
            fired.mark(missed(label))


def record_coordinator_crashes(
    occurrences: list[Occurrence[CoordinatorCrash]],
    fired: FiredLog,
    history: HistoryWriter,
    elapsed_s: float,
    pid: int | None,
    code: int | None,
) -> None:
    """The runner saw the driver exit: a coordinator_crash whose driver reached its seam
    (it marks the occurrence just before it SIGKILLs itself) is recorded now, with the
    exit code, as the crash it was. Any other exit records nothing."""
    if code != -signal.SIGKILL:
        return
    for o in occurrences:
        if fired.fired(o.label) and fired.mark(exited(o.label)):
            record_fault(history, o, elapsed_s, pid=pid, exit_code=code, point=o.fault.point)
