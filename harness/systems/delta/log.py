"""Delta's commit log: `_delta_log/<version, 20 digits>.json`, one action per line.

What the watch keeps of a version: the batch its `txn` action records (the streaming
sink's SetTransaction(query id, batch id), or foreachBatch's txnAppId/txnVersion), the
data files its `add` and `remove` actions name.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from harness.systems.spark_stream.commit_watch import CommitLog, SeenCommit


def read_version(path: Path, version: int) -> SeenCommit:
    """A version file's actions; ValueError (JSON) if it is not one."""
    batches: list[int] = []
    added: list[str] = []
    removed: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        action = json.loads(line)
        if "txn" in action:
            batches.append(int(action["txn"]["version"]))
        elif "add" in action:
            added.append(str(action["add"]["path"]))
        elif "remove" in action:
            removed.append(str(action["remove"]["path"]))
    batch = max(batches) if batches else None
    return SeenCommit(0.0, 0, version, batch, tuple(added), tuple(removed))


DELTA_LOG = CommitLog("_delta_log", re.compile(r"^(\d{20})\.json$"), read_version, first=0)
