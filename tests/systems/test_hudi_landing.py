"""The landed event feed: files per tick and partition, atomic, deterministic, complete."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

from harness.pipeline.events import SCHEMA, EventSpec, generate
from harness.pipeline.rates import rate_law
from harness.systems.spark_stream.landing import Lander, file_name, parse_name

SPEC = EventSpec(mode="append", seed=11, partitions=3, payload_bytes=8)


def _ids(folder: Path) -> np.ndarray:
    files = sorted(p for p in folder.iterdir() if p.suffix == ".parquet")
    return np.concatenate([pq.read_table(p).column("event_id").to_numpy() for p in files])


def test_each_step_lands_the_offsets_the_law_made_due_once_per_partition(tmp_path: Path) -> None:
    lander = Lander(SPEC, rate_law({"shape": "constant", "rows_per_s": 100}, 10), tmp_path)
    first = lander.land_due(1.0)
    assert [(f.partition, f.start, f.end) for f in first] == [(p, 0, 100) for p in range(3)]
    assert lander.land_due(1.0) == []  # nothing new is due: no file, no tick
    second = lander.land_due(2.5)
    assert {(f.start, f.end, f.tick) for f in second} == {(100, 250, 2)}
    assert lander.offsets_landed() == 250
    ids = _ids(tmp_path)
    assert sorted(ids.tolist()) == list(range(250))  # every offset once, across partitions
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporaries


def test_landed_rows_are_the_events_generate_makes(tmp_path: Path) -> None:
    lander = Lander(SPEC, rate_law({"shape": "constant", "rows_per_s": 40}, 10), tmp_path)
    landed = lander.land_due(1.0)[1]
    table = pq.read_table(tmp_path / landed.name)
    assert table.schema.equals(SCHEMA)
    expected = generate(SPEC, landed.partition, landed.start, landed.end, 0.0, 1.0)
    for column in ("id", "event_id", "payload"):  # event times depend on the wall clock
        assert table.column(column).to_pylist() == expected.column(column).to_pylist()


def test_names_sort_in_landing_order_and_parse_back() -> None:
    names = [file_name(t, p, s, s + 10) for t, s in ((2, 20), (10, 100)) for p in (1, 0)]
    assert sorted(names) == [names[1], names[0], names[3], names[2]]
    parsed = parse_name(file_name(12, 3, 40, 90))
    assert parsed is not None
    assert (parsed.tick, parsed.partition, parsed.start, parsed.end) == (12, 3, 40, 90)
    assert parse_name(".000000001-p0000-000000000000-000000000010.parquet.tmp") is None
    assert parse_name("_SUCCESS") is None


def test_the_thread_lands_until_stopped(tmp_path: Path) -> None:
    law = rate_law({"shape": "constant", "rows_per_s": 1000}, 10)
    lander = Lander(SPEC, law, tmp_path, interval_s=0.05)
    lander.start()
    deadline = time.monotonic() + 5
    while lander.offsets_landed() < 200 and time.monotonic() < deadline:
        time.sleep(0.01)
    lander.stop()
    assert lander.error is None
    landed = lander.offsets_landed()
    assert landed >= 200
    time.sleep(0.1)
    assert lander.offsets_landed() == landed  # stopped means stopped
    assert sorted(_ids(tmp_path).tolist()) == list(range(landed))
    ticks = [f.tick for f in lander.files()]
    assert ticks == sorted(ticks)
