"""The table's metadata is Apache Hudi 1.x's (table version 8, timeline layout 2): the
properties file, Avro commit metadata, compaction completing as a commit; hudi-rs (the
`hudi` package, Hudi's own reader) opens what the engine writes."""

from __future__ import annotations

import io
import json
import os

import fastavro
import pyarrow as pa
import pytest
from hudi import HudiTableBuilder

from engine.config import TableConfig
from engine.errors import NotATableError
from engine.storage import Storage
from engine.table import Table, WriteStat, cleaning
from engine.table.properties import (
    FORMAT_VERSION,
    PROPERTIES,
    TABLE_VERSION,
    TIMELINE_LAYOUT_VERSION,
    format_properties,
    parse_properties,
)
from engine.timeline.active import TIMELINE_DIR
from engine.timeline.avro import ContainerCodec
from engine.timeline.commit_metadata import CommitMetadata, RollbackRecord

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string())])
T = "20240101000000001"


def _stat(name: str, kind: str = "base", prev: str | None = None) -> WriteStat:
    return WriteStat("fg-0001", name, kind, T, "0-0-1", "upsert", 5, 3, 1, 2, 1234, prev)


def _full_metadata() -> CommitMetadata:
    base = f"fg-0001_0-0-1_{T}.parquet"
    log = f".fg-0001_{T}.log.2_0-0-1"
    return CommitMetadata(
        stats=[_stat(base, prev="fg-0001_0-0-0_20231231000000000.parquet"), _stat(log, "log")],
        operation="delete,upsert",
        writer_id="writer-1",
        requested_seq=7,
        completion_seq=9,
        occ_baseline="20231231000000005",
        superseded=[f"fg-0001_0-0-0_{T}.parquet"],
        arrow_schema="c2NoZW1h",
        avro_schema='{"type":"record","name":"r","fields":[]}',
        fence="e3/12",
        compaction_plan=[{"file_id": "fg-0001", "base": None, "logs": [log]}],
        compacted=[log],
        rollback=RollbackRecord(T, "commit", "inflight", [{"kind": "requested", "time": T}], []),
        extra={"stream_checkpoint_id": 3, "rollback_note": "x", "nested": {"a": [1, None]}},
    )


def test_commit_metadata_round_trips_through_avro_and_json():
    meta = _full_metadata()
    assert CommitMetadata.from_avro_bytes(meta.to_avro_bytes(), "f") == meta
    assert CommitMetadata.from_json_bytes(meta.to_json_bytes(), "f") == meta
    empty = CommitMetadata()
    assert CommitMetadata.from_avro_bytes(empty.to_avro_bytes(), "f") == empty


def test_completed_metadata_is_one_hoodie_commit_metadata_record():
    meta = _full_metadata()
    (record,) = fastavro.reader(io.BytesIO(meta.to_avro_bytes()))
    stats = record["partitionToWriteStats"][""]
    assert [s["fileId"] for s in stats] == ["fg-0001", "fg-0001"]
    assert [s["path"] for s in stats] == [st.file_name for st in meta.stats]
    assert stats[0]["prevCommit"] == "20231231000000000" and stats[0]["numWrites"] == 5
    assert stats[1]["logFiles"] == [meta.stats[1].file_name] and stats[1]["logVersion"] == 2
    assert record["operationType"] == "UNKNOWN" and record["compacted"] is True
    assert record["extraMetadata"]["schema"] == meta.avro_schema  # Hudi readers' key
    assert json.loads(record["extraMetadata"]["stream_checkpoint_id"]) == 3
    single = CommitMetadata(stats=[meta.stats[0]], operation="upsert")
    (record,) = fastavro.reader(io.BytesIO(single.to_avro_bytes()))
    assert record["operationType"] == "UPSERT" and record["compacted"] is False


def test_the_container_codec_writes_what_fastavro_reads_and_reads_fastavro_files():
    schema = {
        "type": "record",
        "name": "R",
        "fields": [
            {"name": "n", "type": ["null", "long"], "default": None},
            {"name": "v", "type": ["int", "null"], "default": 1},
            {"name": "s", "type": "string"},
            {"name": "b", "type": "boolean"},
            {"name": "m", "type": {"type": "map", "values": {"type": "array", "items": "long"}}},
        ],
    }
    codec = ContainerCodec(schema)
    records = [
        {"n": -(2**62), "v": None, "s": "é✓", "b": True, "m": {"": [0, -1, 2**40]}},
        {"n": None, "v": -3, "s": "", "b": False, "m": {}},
    ]
    for record in records:
        data = codec.write(record)
        assert list(fastavro.reader(io.BytesIO(data))) == [record]  # any Avro reader
        assert codec.read(data) == [record]  # its own files: the fast path
        other = io.BytesIO()
        fastavro.writer(other, schema, [record, record], codec="deflate")
        assert codec.read(other.getvalue()) == [record, record]  # the general path


def test_properties_are_java_properties_lines():
    props = {"a.b": "x=y:z", "hoodie.table.name": "t", "path": "C:\\dir\nnext"}
    text = format_properties(props).decode()
    assert text.splitlines()[1] == "hoodie.table.name=t"
    assert parse_properties(text + "# comment\n! other\n\n") == props


def test_a_table_writes_hudi_properties_and_reopens_with_its_config(tmp_path):
    config = TableConfig(table_type="mor", key_field="id", file_groups=3, ordering_field="v")
    Table.create(str(tmp_path / "t"), config, schema=SCHEMA).close()
    props = parse_properties((tmp_path / "t" / PROPERTIES).read_text())
    assert props["hoodie.table.type"] == "MERGE_ON_READ"
    assert props["hoodie.table.version"] == str(TABLE_VERSION) == "8"
    assert props["hoodie.timeline.layout.version"] == str(TIMELINE_LAYOUT_VERSION) == "2"
    assert props["hoodie.table.recordkey.fields"] == "id"
    assert props["hoodie.table.precombine.field"] == props["hoodie.table.ordering.fields"] == "v"
    # The engine merges by commit, whatever the ordering field: Hudi's commit-time ordering.
    assert props["hoodie.record.merge.mode"] == "COMMIT_TIME_ORDERING"
    assert props["hoodie.record.merge.strategy.id"] == "ce9acb64-bde0-424c-9b91-f6ebba25356d"
    assert props["hoodie.compaction.payload.class"].endswith(".OverwriteWithLatestAvroPayload")
    assert props["hoodie.table.checksum"] == "498511606"  # java.util.zip.CRC32 of ".t"
    assert json.loads(props["hoodie.table.create.schema"])["fields"][0]["name"] == "id"
    reopened = Table.open(str(tmp_path / "t"))
    assert reopened.config == config and reopened.schema == SCHEMA
    reopened.close()


def test_a_table_of_an_older_instantbench_is_refused_naming_its_format(tmp_path):
    storage = Storage(str(tmp_path))
    storage.makedirs(".hoodie")
    old = {"format_version": 1, "table": TableConfig().to_dict(), "schema": None}
    storage.write_bytes(PROPERTIES, json.dumps(old).encode())
    with pytest.raises(NotATableError, match="older instantbench: format version 1"):
        Table.open(str(tmp_path))
    storage.write_bytes(PROPERTIES, b"hoodie.table.name=x\nhoodie.table.version=6\n")
    with pytest.raises(NotATableError, match=r"hoodie\.table\.version=6"):
        Table.open(str(tmp_path))
    # Format 3 kept the engine's own rows in its archived timeline: refused, not misread.
    Table.create(str(tmp_path / "t"), TableConfig()).close()
    current = (tmp_path / "t" / PROPERTIES).read_text()
    storage.write_bytes(
        PROPERTIES, current.replace(f"format.version={FORMAT_VERSION}", "format.version=3").encode()
    )
    with pytest.raises(NotATableError, match=r"instantbench\.format\.version=3"):
        Table.open(str(tmp_path))


def _mor_with_compaction(path: str) -> tuple[Table, list[str], str]:
    t = Table.create(path, TableConfig(table_type="mor", file_groups=2), schema=SCHEMA)
    data = []
    for n in range(2):
        with t.transaction() as tx:
            tx.write(pa.table({"id": [1, 2 + n], "v": [f"a{n}", f"b{n}"]}))
        data.append(tx.instant.requested_time)
    compaction = t.schedule_compaction()
    assert compaction is not None
    t.run_compaction(compaction)
    with t.transaction() as tx:
        tx.write(pa.table({"id": [1], "v": ["z"]}))
    data.append(tx.instant.requested_time)
    t.rollback(t.start_instant())
    return t, data, compaction.requested_time


def test_a_compaction_completes_as_a_commit_and_reads_back_as_a_compaction(tmp_path):
    t, _, c = _mor_with_compaction(str(tmp_path / "t"))
    names = os.listdir(tmp_path / "t" / TIMELINE_DIR)
    (done,) = [n for n in names if n.startswith(f"{c}_")]
    assert done.endswith(".commit") and not any(".compaction" in n for n in names)
    fresh = Table.open(str(tmp_path / "t"))
    (compaction,) = [i for i in fresh.timeline.completed() if i.requested_time == c]
    assert compaction.action == "compaction" and compaction.file_name == done
    meta = fresh.timeline.read_metadata(compaction)
    assert meta.operation == "compact" and meta.compacted and meta.num_files == 2
    with pytest.raises(Exception, match="deltacommits"):
        fresh.start_instant(action="commit")  # a mor commit would read back as compaction
    for table in (t, fresh):
        table.close()


def test_hudi_rs_opens_a_cow_table_and_reads_its_timeline_and_rows(tmp_path):
    t = Table.create(str(tmp_path / "t"), TableConfig(file_groups=2), schema=SCHEMA)
    for n in range(3):
        with t.transaction() as tx:
            tx.write(pa.table({"id": [n, 10 + n], "v": [f"a{n}", "b"]}))
    hudi = HudiTableBuilder.from_base_uri(str(tmp_path / "t")).build()
    assert hudi.hudi_options()["hoodie.table.version"] == "8"
    timeline = hudi.get_timeline()
    completed = timeline.get_completed_commits()
    assert [i.timestamp for i in completed] == [i.requested_time for i in t.timeline.completed()]
    read = json.loads(timeline.get_instant_metadata_in_json(completed[-1]))
    engine = t.timeline.read_metadata(t.timeline.completed()[-1])
    assert [(s["fileId"], s["path"]) for s in read["partitionToWriteStats"][""]] == [
        (s.file_id, s.file_name) for s in engine.stats
    ]
    assert hudi.get_schema().names == ["id", "v"]
    rows = pa.Table.from_batches(hudi.read()).select(["id", "v"]).sort_by("id")
    assert rows.equals(t.snapshot().select(["id", "v"]).sort_by("id"))
    t.close()


def test_hudi_rs_reads_a_mor_timeline_with_compaction_and_rollback(tmp_path):
    t, data, c = _mor_with_compaction(str(tmp_path / "t"))
    # Pending files hudi-rs must tolerate: a requested compaction plan and a requested
    # deltacommit (the engine's JSON) with its empty inflight file.
    assert t.schedule_compaction() is not None
    t.start_instant()
    timeline = HudiTableBuilder.from_base_uri(str(tmp_path / "t")).build().get_timeline()
    assert [i.timestamp for i in timeline.get_completed_commits()] == [c]
    assert [i.timestamp for i in timeline.get_completed_deltacommits()] == data
    hudi = HudiTableBuilder.from_base_uri(str(tmp_path / "t")).build()
    rows = pa.Table.from_batches(hudi.read()).select(["id", "v"]).sort_by("id")
    assert rows.equals(t.snapshot().select(["id", "v"]).sort_by("id"))
    t.close()


def test_hudi_rs_sees_only_the_active_timeline_after_archiving(tmp_path):
    t = Table.create(str(tmp_path / "t"), TableConfig(file_groups=1), schema=SCHEMA)
    for n in range(4):
        with t.transaction() as tx:
            tx.write(pa.table({"id": [n], "v": ["a"]}))
    assert t.archive(keep=2) == 2
    active = [i.requested_time for i in t.timeline.reload().completed()]
    timeline = HudiTableBuilder.from_base_uri(str(tmp_path / "t")).build().get_timeline()
    # hudi-rs 0.5.0 does not read timeline/history (engine/README.md: archived timeline).
    assert [i.timestamp for i in timeline.get_completed_commits()] == active
    assert len(t.timeline.completed(include_archived=True)) == 4
    t.close()


# Hudi 1.x's own schema (hudi-common/src/main/avro/HoodieCleanMetadata.avsc), as its readers
# resolve a completed clean with it: without the engine's extraMetadata field.
_HUDI_CLEAN_PARTITION = {
    "type": "record",
    "name": "HoodieCleanPartitionMetadata",
    "namespace": "org.apache.hudi.avro.model",
    "fields": [
        {"name": "partitionPath", "type": "string"},
        {"name": "policy", "type": "string"},
        {"name": "deletePathPatterns", "type": {"type": "array", "items": "string"}},
        {"name": "successDeleteFiles", "type": {"type": "array", "items": "string"}},
        {"name": "failedDeleteFiles", "type": {"type": "array", "items": "string"}},
        {"name": "isPartitionDeleted", "type": ["null", "boolean"], "default": None},
    ],
}
_HUDI_CLEAN = {
    "namespace": "org.apache.hudi.avro.model",
    "type": "record",
    "name": "HoodieCleanMetadata",
    "fields": [
        {"name": "policy", "type": "string", "default": ""},
        {"name": "startCleanTime", "type": "string"},
        {"name": "timeTakenInMillis", "type": "long"},
        {"name": "totalFilesDeleted", "type": "int"},
        {"name": "earliestCommitToRetain", "type": "string"},
        {"name": "lastCompletedCommitTimestamp", "type": "string", "default": ""},
        {"name": "partitionMetadata", "type": {"type": "map", "values": _HUDI_CLEAN_PARTITION}},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {
            "name": "bootstrapPartitionMetadata",
            "type": ["null", {"type": "map", "values": "HoodieCleanPartitionMetadata"}],
            "default": None,
        },
    ],
}


def test_a_completed_clean_is_hudi_s_clean_metadata_and_the_engine_reads_its_plan(tmp_path):
    t = Table.create(str(tmp_path / "t"), TableConfig(file_groups=1), SCHEMA, max_skew_ms=0)
    for v in "abc":
        with t.transaction() as tx:
            tx.write(pa.table({"id": [1, 2], "v": [v, v]}, SCHEMA))
    retained = t.timeline.completed()[-2]
    done = cleaning.clean(t, retain_commits=2)
    assert done is not None
    data = t.storage.read_bytes(f"{TIMELINE_DIR}/{done.file_name}")
    (record,) = fastavro.reader(io.BytesIO(data), reader_schema=fastavro.parse_schema(_HUDI_CLEAN))
    deleted = record["partitionMetadata"][""]["successDeleteFiles"]
    assert record["earliestCommitToRetain"] == retained.requested_time
    assert record["startCleanTime"] == done.requested_time and record["version"] == 2
    assert deleted and record["totalFilesDeleted"] == len(deleted)
    plan = Table.open(t.path).timeline.read_metadata(done).extra[cleaning.PLAN_KEY]
    assert plan["files"] == deleted and plan["earliest_retained"] == retained.completed_at


def test_a_requested_compaction_is_hudi_s_compaction_plan_and_the_engine_reads_it(tmp_path):
    config = TableConfig(table_type="mor", file_groups=2)
    t = Table.create(str(tmp_path / "t"), config, SCHEMA, max_skew_ms=0)
    for v in "ab":
        with t.transaction() as tx:
            tx.write(pa.table({"id": [1, 2, 3], "v": [v] * 3}, SCHEMA))
    compaction = t.schedule_compaction()
    assert compaction is not None
    data = t.storage.read_bytes(f"{TIMELINE_DIR}/{compaction.file_name}")
    (record,) = fastavro.reader(io.BytesIO(data))
    plan = Table.open(t.path).timeline.read_metadata(compaction).compaction_plan
    assert plan and record["version"] == 2
    by_group = {op["fileId"]: op for op in record["operations"]}
    assert set(by_group) == {e["file_id"] for e in plan}
    for entry in plan:
        op = by_group[entry["file_id"]]
        assert op["deltaFilePaths"] == entry["logs"] and op["dataFilePath"] == entry["base"]
        first = entry["base"] or entry["logs"][0]
        assert op["baseInstantTime"] in first and op["partitionPath"] == ""
