"""How the runtime-side scripts talk to the harness: one JSON config in, JSON lines out.

Imported by stream_driver.py, batch_writer.py, reader.py and java_probe.py, which the Hudi runtime's
python (pyspark 3.5) runs as scripts: it imports only the standard library, and they find
it beside them (a script's folder is the first entry of sys.path).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

_print_lock = threading.Lock()


def emit(event: str, **fields: Any) -> None:
    """One JSON line on stdout; a listener thread and the main thread may both write."""
    line = json.dumps({"event": event, "t": time.time(), **fields})
    with _print_lock:
        print(line, flush=True)


def script_main(argv: list[str], run: Callable[[dict[str, Any]], int]) -> int:
    """`python SCRIPT CONFIG.json`: run with the config, or exit 2 with the usage."""
    if len(argv) != 2:
        print(f"usage: {os.path.basename(argv[0])} CONFIG.json", file=sys.stderr)
        return 2
    with open(argv[1], encoding="utf-8") as handle:
        return run(json.load(handle))


def java_error(exc: Exception) -> str:
    """The Java exception's own class and message, and its root cause's (py4j's text only
    names the call, and Spark wraps what failed in a task in a SparkException)."""
    java = getattr(exc, "java_exception", None)
    if java is None:
        return f"{type(exc).__name__}: {exc}".splitlines()[0]
    text = _first_line(java.toString())
    root = java
    while root.getCause() is not None and root.getCause() != root:
        root = root.getCause()
    return text if root == java else f"{text} (root cause: {_first_line(root.toString())})"


def _first_line(text: object) -> str:
    return str(text).splitlines()[0] if str(text) else ""
