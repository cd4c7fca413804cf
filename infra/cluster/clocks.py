"""Worker clocks under libfaketime: a file per worker holds its offset, re-read every
second."""

from __future__ import annotations

import os
from pathlib import Path

FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
FAKETIME_CACHE_S = 1


def write_clock_file(path: Path, offset_ms: float) -> None:
    """libfaketime's timestamp file: a relative offset in seconds, e.g. '+0.250000'."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(f"{offset_ms / 1000.0:+.6f}\n")
    os.replace(tmp, path)


def faketime_env(clock_file: Path, lib: str = FAKETIME_LIB, skip_java: bool = False) -> dict:
    """Environment that puts a process (and its children) under libfaketime, reading its
    offset from clock_file. Monotonic clocks stay real (the JVM needs that)."""
    env = {
        "LD_PRELOAD": lib,
        "FAKETIME_TIMESTAMP_FILE": str(clock_file),
        "FAKETIME_CACHE_DURATION": str(FAKETIME_CACHE_S),
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
        "DONT_FAKE_MONOTONIC": "1",
        "FAKETIME_DONT_RESET": "1",
    }
    if skip_java:
        env["FAKETIME_SKIP_CMDS"] = "java"
    return env
