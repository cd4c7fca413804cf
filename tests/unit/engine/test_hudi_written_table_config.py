"""Opening a table Apache Hudi wrote: what the engine takes from Hudi's properties, what it
refuses (naming the key), and how such a table's rows merge by event time."""

from __future__ import annotations

import pyarrow as pa
import pytest

from engine.errors import NotATableError
from engine.storage import Storage
from engine.table import Table
from engine.table.merge import IS_DELETED, latest_per_key
from engine.table.properties import PROPERTIES, format_properties

HUDI_PROPS = {
    "hoodie.table.name": "t",
    "hoodie.table.type": "MERGE_ON_READ",
    "hoodie.table.version": "9",
    "hoodie.timeline.layout.version": "2",
    "hoodie.table.base.file.format": "PARQUET",
    "hoodie.table.recordkey.fields": "id",
    "hoodie.table.partition.fields": "",
    "hoodie.table.ordering.fields": "ts",
    "hoodie.record.merge.mode": "EVENT_TIME_ORDERING",
}


def _open(tmp_path, **changes: str) -> Table:
    storage = Storage(str(tmp_path))
    storage.makedirs(".hoodie/timeline")
    storage.write_bytes(PROPERTIES, format_properties({**HUDI_PROPS, **changes}))
    return Table.open(str(tmp_path))


def test_a_hudi_table_s_type_key_ordering_and_merge_mode_come_from_its_properties(tmp_path):
    table = _open(tmp_path)
    assert (table.config.table_type, table.config.key_field) == ("mor", "id")
    assert table.config.ordering_field == "ts"
    assert table.hudi_merge_mode == "EVENT_TIME_ORDERING"
    assert table.snapshot().num_rows == 0


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("hoodie.table.partition.fields", "day"),
        ("hoodie.table.recordkey.fields", "id,account"),
        ("hoodie.record.merge.mode", "CUSTOM"),
        ("hoodie.table.base.file.format", "ORC"),
    ],
)
def test_a_hudi_layout_the_engine_cannot_read_is_refused_naming_the_key(tmp_path, key, value):
    with pytest.raises(NotATableError, match=f"{key}='{value}'"):
        _open(tmp_path, **{key: value})


def test_a_hudi_table_version_the_engine_does_not_read_is_refused(tmp_path):
    with pytest.raises(NotATableError, match=r"hoodie\.table\.version=6.*\['8', '9'\]"):
        _open(tmp_path, **{"hoodie.table.version": "6"})


def _rows(*rows: tuple[int, int | None, bool]) -> pa.Table:
    ids, ts, deleted = zip(*rows, strict=True)
    return pa.table({"id": list(ids), "ts": list(ts), IS_DELETED: list(deleted)})


def test_event_time_keeps_the_largest_ordering_value_since_the_last_delete():
    rows = _rows(
        (1, 5, False),
        (1, 3, False),  # later commit, lower ts: loses by event time
        (2, 4, False),
        (2, None, True),  # Hudi's delete: no ordering value, acts by commit time
        (2, 1, False),  # re-inserted below the deleted row's ts: wins
        (3, 2, False),
        (3, 2, False),  # a tie goes to the later row
        (4, 9, False),
        (4, None, True),  # deleted last: stays deleted
    )
    rows = rows.append_column("n", pa.array(range(rows.num_rows)))
    got = {r["id"]: r["n"] for r in latest_per_key(rows, ["id"], "ts").to_pylist()}
    assert got == {1: 0, 2: 4, 3: 6, 4: 8}
    by_commit = {r["id"]: r["n"] for r in latest_per_key(rows, ["id"], None).to_pylist()}
    assert by_commit == {1: 1, 2: 4, 3: 6, 4: 8}
