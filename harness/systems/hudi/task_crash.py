"""writer_crash on Hudi: arm the task's Python stage, record the crash once Spark retried it.

The stage itself lives on the runtime side (task_crash_stage.py). The runner arms one
occurrence at a time once its `at_s` is due, and records it as applied only when the
evidence is whole: the armed task's worker claimed `<label>.exited` while the batch's
instant was pending on the timeline, that process is gone, and the retry of the same
task (same stage, same partition, a later attempt) claimed `<label>.retried`, which only
a task Spark ran again after the worker died can do.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import psutil

from harness.faults.evidence import record_fault
from harness.faults.schedule import Occurrence
from harness.history import HistoryWriter
from harness.systems.hudi.task_crash_stage import ARMED, read_claim

POINT = "before_flush"  # the stage runs before Hudi writes any file of the batch


def crash_spec(
    control: Path, table_path: Path, actions: tuple[str, ...], writers: int
) -> dict[str, Any]:
    """The driver config's `task_crash` entry (stream_driver.py adds the stage with it)."""
    return {
        "dir": str(control / "task-crash"),
        "timeline": str(table_path / ".hoodie" / "timeline"),
        "actions": list(actions),
        "writers": writers,
    }


def write_armed(folder: Path, label: str, partition: int, every_attempt: bool = False) -> None:
    """Arm the stage's task `partition` (every attempt of it: the batch fails)."""
    folder.mkdir(parents=True, exist_ok=True)
    armed = {"label": label, "partition": partition, "every_attempt": every_attempt}
    tmp = folder / f".{ARMED}.tmp"
    tmp.write_text(json.dumps(armed))
    os.replace(tmp, folder / ARMED)  # a task reads all of it or none


def failed_batch(folder: Path, label: str, attempts: int) -> dict[str, Any] | None:
    """The first attempt's claim once all `attempts` attempts of the armed task died (the
    job failed: Hudi's sink retries the batch), with each attempt's; None before."""
    first = read_claim(folder / f"{label}.exited")
    later = [read_claim(folder / f"{label}.exited-{n}") for n in range(1, attempts)]
    if first is None or any(claim is None for claim in later):
        return None
    return {**first, "attempts": [first, *later]}


def _partition(occurrence: Occurrence[Any]) -> int:
    return int(str(occurrence.target).split(":", 1)[1])  # writer:N, resolved by the schedule


def _gone(pid: int) -> bool:
    """The process is dead (a zombie its parent has not reaped yet is dead too)."""
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


class TaskCrashes:
    """The run's writer crashes, armed in order of `at_s`, one at a time."""

    def __init__(self, occurrences: list[Occurrence[Any]], spec: dict[str, Any]) -> None:
        self.waiting = sorted(occurrences, key=lambda o: o.at_s)
        self.folder = Path(spec["dir"])
        self.armed: Occurrence[Any] | None = None

    def step(self, elapsed: float, t0: float, history: HistoryWriter) -> None:
        if self.armed is not None:
            self._record_if_retried(t0, history)
        if self.armed is None and self.waiting and self.waiting[0].at_s <= elapsed:
            self.armed = self.waiting.pop(0)
            self._arm(self.armed)

    def _arm(self, occurrence: Occurrence[Any]) -> None:
        write_armed(self.folder, occurrence.label, _partition(occurrence))

    def _record_if_retried(self, t0: float, history: HistoryWriter) -> None:
        occurrence = self.armed
        assert occurrence is not None
        exited = read_claim(self.folder / f"{occurrence.label}.exited")
        retried = read_claim(self.folder / f"{occurrence.label}.retried")
        if exited is None or retried is None:
            return
        if not _gone(int(exited["pid"])):  # the retry ran while the first worker lives on
            return
        record_fault(
            history,
            occurrence,
            float(exited["t"]) - t0,
            point=POINT,
            exited=exited,
            retried=retried,
            worker_gone=True,
        )
        (self.folder / ARMED).unlink(missing_ok=True)
        self.armed = None

    def unsettled(self) -> bool:
        return self.armed is not None or bool(self.waiting)
