"""The engine opens and reads tables Apache Hudi's Spark writer wrote, with Hudi's own
reader's answer (issue 35 item 5).

Hudi 1.2.0 writes three tables in one JVM (harness/systems/hudi/history_writer.py): COW and
MOR at its default table version 9 (ordering field `ts`, so EVENT_TIME_ORDERING), and a MOR
table at version 8 in COMMIT_TIME_ORDERING. Each history has upserts, a delete, a write
whose ordering values are lower than the rows it updates, a re-insert after the delete and
a failed write Hudi rolls back;
the MOR tables compact inline (Avro data blocks and delete blocks in their logs), every
table is cleaned and archived (Hudi's LSM history). The engine's snapshot of each must be
Hudi's, row for row."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engine.errors import ReadOnlyTableError
from engine.table import Table
from harness.systems.hudi.history_writer import __file__ as WRITER
from harness.systems.spark_stream.driver_process import run_group
from harness.systems.spark_stream.runtime_cache import SparkRuntime

pytestmark = pytest.mark.spark

COMMON = {
    "hoodie.table.name": "t",
    "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.partitionpath.field": "",
    "hoodie.datasource.write.keygenerator.class": (
        "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
    ),
    "hoodie.index.type": "BUCKET",
    "hoodie.bucket.index.num.buckets": "2",
    "hoodie.bucket.index.hash.field": "id",
    "hoodie.metadata.enable": "false",
    "hoodie.table.ordering.fields": "ts",
    # Small enough that cleaning and archival run within eight commits.
    "hoodie.clean.commits.retained": "3",
    "hoodie.keep.min.commits": "4",
    "hoodie.keep.max.commits": "5",
}
MOR = {
    "hoodie.datasource.write.table.type": "MERGE_ON_READ",
    "hoodie.compact.inline": "true",
    "hoodie.compact.inline.max.delta.commits": "3",
}
TABLES = {
    "cow": {**COMMON, "hoodie.datasource.write.table.type": "COPY_ON_WRITE"},
    "mor": {**COMMON, **MOR},
    "mor_v8_commit_time": {
        **COMMON,
        **MOR,
        "hoodie.write.table.version": "8",
        # A version-8 table's merge mode follows from its payload class.
        "hoodie.datasource.write.payload.class": (
            "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
        ),
    },
}


def _upsert(ids: range, v: int, ts: int) -> dict[str, Any]:
    return {"operation": "upsert", "rows": [[i, v, ts] for i in ids]}


# Commits 1-5 upsert overlapping keys, with a failed write between 3 and 4 (its task dies:
# the instant stays inflight until commit 4's writer rolls it back); 6 deletes 15-17; 7
# rewrites 0-9 with ts 0 (lower than keys 3-9 hold: event-time ordering keeps the old rows,
# commit-time the new); 8 re-inserts 15-16 below their deleted rows' ts (a delete acts by
# commit time) and updates 20-24. The MOR tables compact after commits 3 and 6, so 7 and 8
# are merged from the logs.
STEPS = [
    *(_upsert(range(3 * n, 3 * n + 10), n, n) for n in range(3)),
    {**_upsert(range(30, 40), 9, 9), "fail": 35},  # left inflight, rolled back by the next
    *(_upsert(range(3 * n, 3 * n + 10), n, n) for n in range(3, 5)),
    {"operation": "delete", "rows": [[i, 0, 0] for i in range(15, 18)]},
    _upsert(range(10), 6, 0),
    {
        "operation": "upsert",
        "rows": [[15, 7, -5], [16, 7, -5], *([i, 7, 7] for i in range(20, 25))],
    },
]


@pytest.fixture(scope="module")
def written(hudi_runtime: SparkRuntime, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("hudi-written")
    cfg = {
        "jars": list(hudi_runtime.jars),
        "out": str(root / "answers.json"),
        "tables": [
            {"path": str(root / name), "options": options, "steps": STEPS}
            for name, options in TABLES.items()
        ],
    }
    (root / "config.json").write_text(json.dumps(cfg))
    code = run_group([hudi_runtime.python, WRITER, str(root / "config.json")], root / "log", 600)
    assert code == 0, (root / "log").read_text()[-3000:]
    answers = json.loads((root / "answers.json").read_text())
    return {name: (root / name, answers[str(root / name)]) for name in TABLES}


def _reads_as_hudi_does(written: dict[str, Any], name: str) -> None:
    path, answer = written[name]
    assert "error" not in answer, answer
    table = Table.open(str(path))
    assert len(table.timeline.archive.reload()) > 0  # archived by Hudi, read here
    if name != "cow":
        assert any(i.action == "compaction" for i in table.timeline.completed())
    assert len(table.timeline.rolled_back()) == 1  # Hudi's rollback record, read here
    rows = table.snapshot(columns=["id", "v", "ts"]).to_pylist()
    assert sorted([r["id"], r["v"], r["ts"]] for r in rows) == answer["snapshot"]


def _tells_event_time_from_commit_time_ordering(written: dict[str, Any]) -> None:
    """Keys 3-9: their older rows (higher ts) win by event time, the newer by commit time;
    so a merge that ignored the table's mode could not read both as Hudi does."""
    by_mode = {
        n: {r[0]: r for r in written[n][1]["snapshot"]} for n in ("mor", "mor_v8_commit_time")
    }
    assert by_mode["mor"][5][1] == 1 and by_mode["mor_v8_commit_time"][5][1] == 6
    assert by_mode["mor"][15] == [15, 7, -5] == by_mode["mor_v8_commit_time"][15]


def _never_changes_a_table_hudi_wrote(written: dict[str, Any]) -> None:
    table = Table.open(str(written["mor"][0]))
    with pytest.raises(ReadOnlyTableError, match="written by Apache Hudi"):
        table.start_instant()
    with pytest.raises(ReadOnlyTableError):
        table.archive(keep=1)


def test_the_engine_reads_tables_hudi_wrote_as_hudi_does(written: dict[str, Any]) -> None:
    """One test for every table: Hudi's JVM writes and reads them once (a module fixture
    would be made again on each xdist worker a test of the module landed on)."""
    for name in TABLES:
        _reads_as_hudi_does(written, name)
    _tells_event_time_from_commit_time_ordering(written)
    _never_changes_a_table_hudi_wrote(written)
