"""Where micro-batches go: through the table engine, or as raw Parquet (the ceiling)."""

from __future__ import annotations

import functools
import threading
from typing import TYPE_CHECKING, Protocol

from harness.faults.driver_faults import DriverFaults
from harness.history import HistoryWriter
from harness.pipeline.config import DriverConfig
from harness.pipeline.raw_sink import TASK_RESULT_SCHEMA, write_raw_parquet

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


class Sink(Protocol):
    def process_batch(self, df: DataFrame, batch_id: int) -> None: ...
    def checkpoint_complete(self, batch_id: int, info: dict) -> None: ...
    def settled(self) -> bool: ...
    def status(self) -> dict: ...
    def service_error(self) -> BaseException | None: ...
    def close(self) -> None: ...


class RawParquetSink:
    """Rows are visible once Spark durably recorded their batch: that is the 'commit'."""

    def __init__(self, cfg: DriverConfig, history: HistoryWriter) -> None:
        self.cfg, self.history = cfg, history
        self._newest: dict[int, float] = {}
        self._lock = threading.Lock()
        self._rows_committed = 0
        self._committed_offset = 0

    def process_batch(self, df: DataFrame, batch_id: int) -> None:
        fn = functools.partial(
            write_raw_parquet, out_dir=f"{self.cfg.table_path}/raw", batch_id=batch_id
        )
        results = df.mapInArrow(fn, TASK_RESULT_SCHEMA).collect()
        with self._lock:
            self._newest[batch_id] = max((r.max_event_time for r in results), default=0.0)

    def checkpoint_complete(self, batch_id: int, info: dict) -> None:
        with self._lock:
            newest = self._newest.pop(batch_id, None)
            self._rows_committed += info["rows"]
            self._committed_offset = info["end_offset"]
        self.history.record(
            "commit",
            instant=f"batch-{batch_id}",
            checkpoint_id=batch_id,
            rows=info["rows"],
            latency_ms=0.0,
            max_event_time=newest if newest is not None else info["t_end"],
            min_offset=info["start_offset"],
            max_offset=info["end_offset"],
        )

    def settled(self) -> bool:
        return True

    def status(self) -> dict:
        with self._lock:
            return {
                "pending_instants": 0,
                "rows_committed": self._rows_committed,
                "committed_offset": self._committed_offset,
            }

    def service_error(self) -> BaseException | None:
        return None  # no table services: files and Spark's checkpoint only

    def close(self) -> None:
        pass


def make_sink(
    cfg: DriverConfig, history: HistoryWriter, restored_batch: int | None, faults: DriverFaults
) -> Sink:
    if cfg.sink == "raw_parquet":
        return RawParquetSink(cfg, history)
    from harness.pipeline.engine_sink import EngineSink

    return EngineSink(cfg, history, restored_batch, faults)
