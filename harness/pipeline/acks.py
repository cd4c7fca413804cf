"""Checkpoint-complete notifications: watch Spark's commit log, tell the sink, in order.

A batch is complete once Spark has durably recorded it (its commit log file exists); only
then is its ACK sent, asynchronously to the query thread, as a Flink checkpoint-complete
notification would be.

The seam `after_spark_commit_before_ack` lies between Spark's commit log and the driver's
own record of the batch: a driver killed there leaves a batch only Spark's checkpoint
knows (the restarted driver resumes after it and never sends its ACK; a later ACK or the
recovery commits it). The exactly-once ground truth must come from that checkpoint.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from harness.history import HistoryWriter
from harness.pipeline.checkpoints import batch_source_offset, committed_batches

SPARK_COMMIT_SEAM = "after_spark_commit_before_ack"


class AckWatcher(threading.Thread):
    def __init__(
        self,
        checkpoint_dir: str,
        on_complete: Callable[[int, dict], None],
        history: HistoryWriter,
        after_batch: int | None,
        poll_s: float = 0.02,
        fault_hook: Callable[[str, dict[str, Any]], None] | None = None,
    ) -> None:
        super().__init__(name="ack-watcher", daemon=True)
        self.checkpoint_dir = checkpoint_dir
        self.on_complete = on_complete
        self.history = history
        self.last = -1 if after_batch is None else after_batch
        self.poll_s = poll_s
        self.fault_hook = fault_hook  # the driver's crash seams (DriverFaults.coordinator_hook)
        self._stop_event = threading.Event()
        self.error: BaseException | None = None

    def poll_once(self) -> None:
        for batch_id in committed_batches(self.checkpoint_dir):
            if batch_id <= self.last:
                continue
            if self.fault_hook is not None:
                self.fault_hook(SPARK_COMMIT_SEAM, {"checkpoint_id": batch_id})
            end = batch_source_offset(self.checkpoint_dir, batch_id) or {"offset": 0, "t": 0}
            prev = batch_source_offset(self.checkpoint_dir, batch_id - 1) if batch_id else None
            start = prev or {"offset": 0, "t": end["t"]}
            info = {
                "batch_id": batch_id,
                "start_offset": int(start["offset"]),
                "end_offset": int(end["offset"]),
                "rows": int(end["offset"]) - int(start["offset"]),
                "t_start": start["t"],
                "t_end": end["t"],
            }
            self.history.record("batch", **info)
            self.last = batch_id
            self.on_complete(batch_id, info)

    def run(self) -> None:
        try:
            while not self._stop_event.wait(self.poll_s):
                self.poll_once()
        except BaseException as exc:  # surfaced by the driver's main loop
            self.error = exc

    def stop(self) -> None:
        """Stop polling, then deliver whatever Spark committed meanwhile (no crash seam on
        the way out: the runner is stopping this driver already)."""
        self._stop_event.set()
        self.join()
        self.fault_hook = None
        self.poll_once()
