"""The event source plans each batch from where the last one ended, on Spark 4.1 (whose
latestOffset() passes no start) as on 4.2+ (which passes it): from its own last offset,
or, in a query restarted from its checkpoint, from Spark's newest offset log entry."""

import json
from pathlib import Path

from spark_checkpoint import chained, write_checkpoint

from harness.pipeline.events import EventSpec
from harness.pipeline.source import EventStreamReader

UNBOUNDED = {"shape": "unbounded", "rows_per_batch": 100}


def _reader(tmp_path: Path, checkpoint: Path) -> EventStreamReader:
    spec = EventSpec(mode="append", seed=1, partitions=2)
    return EventStreamReader(
        {
            "spec": json.dumps(spec.to_dict()),
            "rate": json.dumps(UNBOUNDED),
            "run_s": "60",
            "t0_file": str(tmp_path / "t0"),
            "checkpoint_dir": str(checkpoint),
        }
    )


def test_each_batch_starts_where_the_readers_last_one_ended(tmp_path: Path) -> None:
    reader = _reader(tmp_path, tmp_path / "no-checkpoint-yet")
    assert reader.latestOffset()["offset"] == 100  # Spark 4.1: no start
    assert reader.latestOffset()["offset"] == 200
    start = {"offset": 500, "t": 1.0}  # Spark 4.2+: the start Spark gives wins
    assert reader.latestOffset(start)["offset"] == 600


def test_a_restarted_query_plans_from_sparks_newest_offset_entry(tmp_path: Path) -> None:
    checkpoint = write_checkpoint(tmp_path / "ckpt", chained(100, 200, 300), commits=[0, 1])
    reader = _reader(tmp_path, checkpoint)  # a new driver: this reader handed out nothing
    assert reader.latestOffset()["offset"] == 400
