"""The runtime-side scripts (run by pyspark 3.5's python) and their project-side halves."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from harness.systems.hudi import (
    batch_writer,
    history_writer,
    java_probe,
    reader,
    script_io,
    spark_session,
    stream_driver,
    table_options,
    task_crash_stage,
    timeline_names,
    transaction,
)
from harness.systems.hudi.read_table import (
    CompletedInstant,
    ReadRequest,
    TableRead,
    collect,
    completed_instants,
)
from harness.systems.hudi.timeline_watch import SeenInstant

ALLOWED = {"pyspark"}  # plus the standard library: nothing of the project, no pyarrow
# The session module the scripts share: beside them when the runtime runs them as scripts,
# through the project's package when the tests import them (the only project import).
SHARED = {
    *("spark_session", "table_options", "script_io", "task_crash_stage", "transaction"),
    "harness",
}


def _top_level_imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def _foreign(module: object) -> set[str]:
    imported = _top_level_imports(Path(getattr(module, "__file__", "") or ""))
    return {n for n in imported if n not in sys.stdlib_module_names and n != "__future__"}


def test_runtime_scripts_import_only_pyspark_and_the_standard_library() -> None:
    assert _foreign(spark_session) <= ALLOWED
    assert _foreign(table_options) == set()
    assert _foreign(script_io) == set()
    assert _foreign(timeline_names) == set()
    assert _foreign(transaction) <= {"harness", "script_io"}
    # shipped to the executors with timeline_names beside it (addPyFile)
    assert _foreign(task_crash_stage) <= ALLOWED | {"harness", "timeline_names"}
    for module in (stream_driver, reader, batch_writer, java_probe, history_writer):
        assert _foreign(module) <= ALLOWED | SHARED, module.__name__
        text = Path(module.__file__ or "").read_text()
        assert "from harness.systems.hudi.spark_session import" in text
        assert "from spark_session import" in text  # how the runtime's python finds it
        assert "script_main(sys.argv, run)" in text  # one way in for every script


def test_a_script_takes_one_config_and_says_its_usage_otherwise(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "cfg.json"
    config.write_text(json.dumps({"rows": 3}))
    assert script_io.script_main(["/x/batch_writer.py", str(config)], lambda cfg: cfg["rows"]) == 3
    assert script_io.script_main(["/x/batch_writer.py"], lambda cfg: 0) == 2
    assert "usage: batch_writer.py CONFIG.json" in capsys.readouterr().err
    script_io.emit("txn", writer="w0")
    line = json.loads(capsys.readouterr().out)
    assert line["event"] == "txn" and line["writer"] == "w0" and line["t"] > 0


def test_the_scripts_share_one_hudi_session() -> None:
    cfg = {"spark_conf": {"spark.driver.extraJavaOptions": "-Xss4m", "spark.foo": 1}}
    conf = spark_session.session_conf(cfg)
    assert conf["spark.serializer"] == "org.apache.spark.serializer.KryoSerializer"
    assert conf["spark.kryo.registrator"] == "org.apache.spark.HoodieSparkKryoRegistrar"
    # The config's JVM options come after Hudi's, not instead of them.
    assert conf["spark.driver.extraJavaOptions"] == f"{spark_session.JAVA_OPTIONS} -Xss4m"
    assert conf["spark.executor.extraJavaOptions"] == spark_session.JAVA_OPTIONS
    assert conf["spark.foo"] == "1"


def test_sink_options_follow_the_scenario() -> None:
    base = {"table_name": "t", "identifier": "w0", "checkpoint_dir": "/c", "file_groups": 6}
    mor = stream_driver.hudi_options({**base, "table_type": "mor", "mode": "append"})
    assert mor["hoodie.datasource.write.table.type"] == "MERGE_ON_READ"
    assert mor["hoodie.datasource.write.operation"] == "insert"
    assert mor["hoodie.table.ordering.fields"] == "event_id"
    assert mor["hoodie.datasource.write.recordkey.field"] == "id"
    assert mor["hoodie.datasource.write.streaming.checkpoint.identifier"] == "w0"
    assert (mor["hoodie.index.type"], mor["hoodie.bucket.index.num.buckets"]) == ("BUCKET", "6")
    assert mor["hoodie.datasource.compaction.async.enable"] == "true"
    cow = stream_driver.hudi_options(
        {**base, "table_type": "cow", "mode": "upsert", "hudi_options": {"hoodie.x": 2}}
    )
    assert cow["hoodie.datasource.write.table.type"] == "COPY_ON_WRITE"
    assert cow["hoodie.datasource.write.operation"] == "upsert"
    assert "hoodie.datasource.compaction.async.enable" not in cow
    assert cow["hoodie.x"] == "2"
    assert cow["hoodie.datasource.write.partitionpath.field"] == ""


def test_a_bank_table_keeps_balances_and_legs_apart_and_the_latest_commit_wins() -> None:
    base = {"table_name": "t", "identifier": "w0", "checkpoint_dir": "/c", "table_type": "cow"}
    bank = stream_driver.hudi_options({**base, "mode": "bank"})
    assert bank["hoodie.datasource.write.partitionpath.field"] == table_options.LEDGER_COLUMN
    assert bank["hoodie.record.merge.mode"] == "COMMIT_TIME_ORDERING"
    assert "hoodie.table.ordering.fields" not in bank  # a transfer rewrites any balance
    assert bank["hoodie.datasource.write.operation"] == "upsert"
    # A batch writer writes the same table with the same layout.
    writer = table_options.table_options({**base, "mode": "bank"})
    assert {k: bank[k] for k in writer} == writer


def test_a_transfer_is_one_merge_that_reads_the_balance_it_rewrites() -> None:
    sql = batch_writer.transfer_sql("bank", 1, 3, 25)
    assert sql.startswith("MERGE INTO bank t USING (")
    assert "CAST(-2 AS BIGINT) AS id, CAST(-25 AS BIGINT) AS delta" in sql
    assert "CAST(-4 AS BIGINT) AS id, CAST(25 AS BIGINT) AS delta" in sql
    assert f"'accounts' AS {table_options.LEDGER_COLUMN}" in sql
    assert sql.endswith("WHEN MATCHED THEN UPDATE SET t.amount = t.amount + s.delta")


def test_a_writer_waits_for_a_committed_table(tmp_path: Path) -> None:
    timeline = tmp_path / ".hoodie" / "timeline"
    timeline.mkdir(parents=True)
    (timeline / "001.commit.requested").write_text("")
    try:
        batch_writer.wait_for_table(str(tmp_path), 0.3)
        raise AssertionError("a requested commit is not a committed table")
    except TimeoutError:
        pass
    (timeline / "001_002.commit").write_text("")
    batch_writer.wait_for_table(str(tmp_path), 0.3)


def test_reader_plan_and_config_for_completed_instants(tmp_path: Path) -> None:
    entries = [
        SeenInstant(0.0, 0, "001.deltacommit.requested", "requested", "deltacommit", "001", None),
        SeenInstant(1.0, 1, "001_003.deltacommit", "completed", "deltacommit", "001", "003"),
        SeenInstant(1.0, 1, "002_004.commit", "completed", "commit", "002", "004"),
        SeenInstant(2.0, 2, "005_006.clean", "completed", "clean", "005", "006"),
    ]
    instants = completed_instants(entries, actions=("deltacommit", "commit"))
    assert instants == [CompletedInstant("001", "003"), CompletedInstant("002", "004")]
    cfg = TableRead(tmp_path / "t", tmp_path / "out", ReadRequest.of_instants(instants)).config()
    assert cfg["as_of"] == ["001", "002"]
    assert cfg["incremental"] == [["0", "003"], ["003", "004"]]
    assert [(k, n) for k, n, _ in reader.plan(cfg)] == [
        ("snapshot", "latest"),
        ("as_of", "001"),
        ("as_of", "002"),
        ("incremental", "0_003"),
        ("incremental", "003_004"),
    ]


def _spark_output(folder: Path, ids: list[int]) -> str:
    folder.mkdir(parents=True)
    table = pa.table({"id": ids, "event_id": ids, "_hoodie_commit_time": ["001"] * len(ids)})
    pq.write_table(table, folder / "part-00000-x.snappy.parquet")
    (folder / "_SUCCESS").write_text("")
    (folder / ".part-00000-x.snappy.parquet.crc").write_bytes(b"\x00")
    return str(folder)


def test_reads_are_loaded_from_the_manifest(tmp_path: Path) -> None:
    reads = [
        {"kind": "snapshot", "name": "latest", "path": _spark_output(tmp_path / "s", [1, 2, 3])},
        {"kind": "as_of", "name": "001", "path": _spark_output(tmp_path / "a", [1])},
        {"kind": "incremental", "name": "0_003", "path": _spark_output(tmp_path / "i", [1, 2])},
        {"kind": "as_of", "name": "002", "path": "", "error": "HoodieException: boom"},
    ]
    (tmp_path / "manifest.json").write_text(json.dumps({"reads": reads}))
    loaded = collect(tmp_path, 1)
    assert loaded.snapshot is not None and loaded.snapshot.column("id").to_pylist() == [1, 2, 3]
    assert loaded.as_of["001"].num_rows == 1
    assert loaded.incremental[("0", "003")].num_rows == 2
    assert loaded.errors == {"as_of/002": "HoodieException: boom"}
    missing = collect(tmp_path / "nothing", 137)
    assert missing.snapshot is None and "no manifest (exit code 137)" in missing.errors["reader"]


def test_a_runtime_s_class_archive_is_mapped_by_its_driver_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "spark-classes.jsa"
    monkeypatch.setattr(spark_session, "CLASS_ARCHIVE", str(archive))
    assert spark_session.driver_java_options() == spark_session.JAVA_OPTIONS  # none made
    archive.write_bytes(b"classes")
    conf = spark_session.session_conf({})
    driver = conf["spark.driver.extraJavaOptions"]
    assert driver.startswith(f"-XX:SharedArchiveFile={archive} -Xshare:auto")
    assert driver.endswith(spark_session.JAVA_OPTIONS)
    assert conf["spark.executor.extraJavaOptions"] == spark_session.JAVA_OPTIONS
