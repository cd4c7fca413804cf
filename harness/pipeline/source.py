"""The event source as a Spark streaming source (PySpark's Python Data Source API).

Offsets are {"offset": rows, "t": epoch seconds when Spark planned them}. Spark logs them
in the checkpoint location, so a replayed micro-batch regenerates exactly the same rows.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

from harness.pipeline.checkpoints import last_logged_offset
from harness.pipeline.events import SPARK_SCHEMA, EventSpec, generate
from harness.pipeline.rates import rate_law
from harness.run_clock import RunClock

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql.streaming.datasource import ReadLimit
    from pyspark.sql.types import StructType

SOURCE_NAME = "instantbench_events"


class _Slice(InputPartition):
    def __init__(self, partition: int, start: dict, end: dict) -> None:
        self.partition, self.start, self.end = partition, start, end


class EventStreamReader(DataSourceStreamReader):
    def __init__(self, options: dict[str, str]) -> None:
        self.spec = EventSpec(**json.loads(options["spec"]))
        self.law = rate_law(json.loads(options["rate"]), float(options["run_s"]))
        self.clock = RunClock(options["t0_file"])
        self.checkpoint_dir = options["checkpoint_dir"]
        self._planned: dict | None = None  # the last end offset this reader handed Spark

    def initialOffset(self) -> dict:
        return {"offset": 0, "t": self.clock.start()}

    def latestOffset(self, start: dict | None = None, limit: ReadLimit | None = None) -> dict:
        # Spark 4.1 passes no start (4.2 added it): the batch starts where this reader's
        # last one ended, or, in a restarted query, at the newest entry of Spark's offset
        # log, which is where Spark plans the next batch from.
        start = start or self._planned or last_logged_offset(self.checkpoint_dir)
        start = start or self.initialOffset()
        now = time.time()
        offset = self.law.next_offset(int(start["offset"]), now - self.clock.start())
        self._planned = start if offset == start["offset"] else {"offset": offset, "t": now}
        return self._planned

    def partitions(self, start: dict, end: dict) -> list[_Slice]:
        # One slice per writer task even for an empty range (the first batch of a run that
        # starts idle): like a Flink checkpoint barrier, every checkpoint reaches every
        # writer, which then reports (empty) WriteMeta, so the coordinator can settle the
        # instant instead of waiting for tasks that never ran.
        return [_Slice(p, start, end) for p in range(self.spec.partitions)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, _Slice):  # what `partitions` returned
            raise TypeError(f"not a slice of this source: {partition!r}")
        s, e = partition.start, partition.end
        yield generate(self.spec, partition.partition, s["offset"], e["offset"], s["t"], e["t"])


class EventSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return SOURCE_NAME

    def schema(self) -> str:
        return SPARK_SCHEMA

    def streamReader(self, schema: StructType) -> EventStreamReader:
        return EventStreamReader(dict(self.options))
