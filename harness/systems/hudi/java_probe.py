"""Ask Java Hudi what it makes of a table's files: every answer comes from Hudi's own code.

Run by the Hudi runtime's python (pyspark 3.5), which reaches Hudi's classes through the
session's JVM (py4j); imports only pyspark and the standard library, takes one JSON config:

    python java_probe.py CONFIG.json

Config: tables (paths), out (the answer's JSON file), jars, master (default local[1]) and
optionally columns (the snapshot's columns; default every column but Hudi's meta columns).
For each table the answer holds, by section (a section Hudi fails on holds its `error`,
the others still count):
  files       each file in the table's folder: FSUtils.isBaseFile / isLogFile, and the
              fields Hudi's own name parsers return (file id, instant, log version, write
              token; a log's token parts as FSUtils parses them)
  properties  what HoodieTableMetaClient loads from hoodie.properties: the checksum check,
              merge mode, payload class and merge strategy id as the table config reads
              them, what Hudi infers from them for a table before version 9 (its writers'
              and readers' check), and the properties Hudi's own table builder makes from
              the file (what a table Hudi created with these settings would hold)
  timeline    each file of the active timeline's folder as Hudi's instant generator parses
              it, with the file name Hudi gives that instant; the active and the archived
              (LSM) timeline as HoodieTableMetaClient loads them
  slices      what a snapshot read merges of each file group: Hudi's file-system view's
              latest merged slice (across a pending compaction) at the last completed instant
  snapshot    the rows of a snapshot read through Spark's `hudi` datasource
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable, Iterable
from typing import Any, cast

from pyspark.sql import SparkSession

try:  # imported as a module of the project (its tests)
    from harness.systems.hudi.script_io import java_error, script_main
    from harness.systems.hudi.spark_session import build_session
except ImportError:  # run as a script by the Hudi runtime's python: the modules are beside it
    from script_io import java_error, script_main  # type: ignore[no-redef]
    from spark_session import build_session  # type: ignore[no-redef]

META_PREFIX = "_hoodie_"
TIMELINE = ".hoodie/timeline"


def guarded(section: Callable[[], Any]) -> Any:
    """The section's answer, or {"error": ...}: one failure must not hide the others."""
    try:
        return section()
    except Exception as exc:
        return {"error": java_error(exc)}


def each(java_iterable: Any) -> Iterable[Any]:
    """A Java stream, collection or iterator, element by element."""
    it = java_iterable.iterator() if hasattr(java_iterable, "iterator") else java_iterable
    while it.hasNext():
        yield it.next()


def optional(option: Any) -> Any:
    return option.get() if option.isPresent() else None


class Probe:
    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        self.jvm = cast(Any, spark._jvm)  # py4j's view of the session's JVM: untyped
        self.hudi = self.jvm.org.apache.hudi
        hadoop = cast(Any, spark._jsc).hadoopConfiguration()
        self.conf = self.hudi.storage.hadoop.HadoopStorageConfiguration(hadoop)

    def path(self, text: str) -> Any:
        return self.hudi.storage.StoragePath(text)

    def file(self, table: str, name: str) -> dict[str, Any]:
        fs, path = self.hudi.common.fs.FSUtils, self.path(f"{table}/{name}")
        entry: dict[str, Any] = {
            "name": name,
            "is_base": bool(fs.isBaseFile(path)),
            "is_log": bool(fs.isLogFile(path)),
        }
        if entry["is_log"]:
            log = self.hudi.common.model.HoodieLogFile(path)
            entry.update(
                file_id=log.getFileId(),
                instant=log.getDeltaCommitTime(),
                version=log.getLogVersion(),
                write_token=log.getLogWriteToken(),
                token_parts=[
                    fs.getTaskPartitionIdFromLogPath(path),
                    fs.getStageIdFromLogPath(path),
                    fs.getTaskAttemptIdFromLogPath(path),
                ],
            )
        elif entry["is_base"]:
            base = self.hudi.common.model.HoodieBaseFile(str(path))
            entry.update(
                file_id=base.getFileId(),
                instant=base.getCommitTime(),
                write_token=fs.getWriteTokenFromBaseFile(name),
            )
        return entry

    def files(self, table: str) -> list[dict[str, Any]]:
        names = sorted(n for n in os.listdir(table) if n != ".hoodie")
        return [guarded(functools.partial(self.file, table, n)) | {"name": n} for n in names]

    def meta_client(self, table: str) -> Any:
        builder = self.hudi.common.table.HoodieTableMetaClient.builder()
        return builder.setConf(self.conf).setBasePath(table).build()

    def properties(self, table: str) -> dict[str, Any]:
        config = self.meta_client(table).getTableConfig()
        stored = [
            optional_str(config.getRecordMergeMode()),
            config.getPayloadClass(),
            config.getRecordMergeStrategyId(),
        ]
        return {
            "checksum_valid": bool(
                self.hudi.common.table.HoodieTableConfig.validateChecksum(config.getProps())
            ),
            "merge": stored,
            "inferred": guarded(lambda: self.inferred(config)),
            "builder": guarded(lambda: self.builder_properties(table)),
        }

    def inferred(self, config: Any) -> list[str | None]:
        triple = self.hudi.common.table.HoodieTableConfig.inferMergingConfigsForPreV9Table(
            config.getRecordMergeMode(),
            config.getPayloadClass(),
            config.getRecordMergeStrategyId(),
            optional(config.getOrderingFieldsStr()),
            config.getTableVersion(),
        )
        return [optional_str(triple.getLeft()), triple.getMiddle(), triple.getRight()]

    def builder_properties(self, table: str) -> dict[str, str]:
        props = self.jvm.java.util.Properties()
        stream = self.jvm.java.io.FileInputStream(f"{table}/.hoodie/hoodie.properties")
        try:
            props.load(stream)
        finally:
            stream.close()
        builder = self.hudi.common.table.HoodieTableMetaClient.newTableBuilder()
        built = builder.fromProperties(props).build()
        return {str(k): str(built.getProperty(k)) for k in each(built.stringPropertyNames())}

    def instant(self, instant: Any) -> list[str | None]:
        return [
            instant.requestedTime(),
            instant.getCompletionTime(),
            instant.getAction(),
            str(instant.getState()),
        ]

    def parsed(self, generator: Any, info: Any) -> list[str | None]:
        """A timeline file as Hudi's instant generator reads its name, and the name Hudi's
        file name generator gives that instant."""
        instant = generator.createNewInstant(info)
        names = self.hudi.common.table.timeline.versioning.v2.InstantFileNameGeneratorV2()
        return [*self.instant(instant), names.getFileName(instant)]

    def timeline(self, table: str) -> dict[str, Any]:
        client = self.meta_client(table)
        generator = self.hudi.common.table.timeline.versioning.v2.InstantGeneratorV2()
        files = {}
        for info in client.getStorage().listDirectEntries(self.path(f"{table}/{TIMELINE}")):
            if not info.isDirectory():
                name = str(info.getPath().getName())
                files[name] = guarded(functools.partial(self.parsed, generator, info))
        archived = self.hudi.common.table.timeline.versioning.v2.ArchivedTimelineV2(client)
        return {
            "files": files,
            "active": [self.instant(i) for i in client.getActiveTimeline().getInstants()],
            "archived": [self.instant(i) for i in archived.getInstants()],
        }

    def slices(self, table: str) -> dict[str, Any]:
        client = self.meta_client(table)
        timeline = client.getCommitsAndCompactionTimeline().filterCompletedAndCompactionInstants()
        context = self.hudi.common.engine.HoodieLocalEngineContext(self.conf)
        view_class = self.hudi.common.table.view.HoodieTableFileSystemView
        view = view_class.fileListingBasedFileSystemView(context, client, timeline)
        last = optional(timeline.filterCompletedInstants().lastInstant())
        if last is None:
            return {}
        slices = {}
        for piece in each(view.getLatestMergedFileSlicesBeforeOrOn("", last.requestedTime())):
            base = optional(piece.getBaseFile())
            slices[str(piece.getFileId())] = {
                "base_instant": piece.getBaseInstantTime(),
                "base": base.getFileName() if base is not None else None,
                "logs": sorted(str(log.getFileName()) for log in each(piece.getLogFiles())),
            }
        view.close()
        return slices

    def snapshot(self, table: str, columns: list[str] | None) -> list[dict[str, Any]]:
        frame = self.spark.read.format("hudi").load(table)
        wanted = columns or [c for c in frame.columns if not c.startswith(META_PREFIX)]
        return [row.asDict() for row in frame.select(*wanted).collect()]


def optional_str(value: Any) -> str | None:
    return None if value is None else str(value.name())


def answer(probe: Probe, table: str, columns: list[str] | None) -> dict[str, Any]:
    return {
        "files": guarded(lambda: probe.files(table)),
        "properties": guarded(lambda: probe.properties(table)),
        "timeline": guarded(lambda: probe.timeline(table)),
        "slices": guarded(lambda: probe.slices(table)),
        "snapshot": guarded(lambda: probe.snapshot(table, columns)),
    }


def run(cfg: dict[str, Any]) -> int:
    spark = build_session(cfg, "hudi-java-probe", "local[1]", {"spark.sql.shuffle.partitions": "1"})
    probe = Probe(spark)
    answers = {table: answer(probe, table, cfg.get("columns")) for table in cfg["tables"]}
    spark.stop()
    with open(cfg["out"] + ".tmp", "w", encoding="utf-8") as handle:
        json.dump(answers, handle, indent=1, default=str)
    os.replace(cfg["out"] + ".tmp", cfg["out"])  # present only once every table is answered
    return 0


if __name__ == "__main__":
    sys.exit(script_main(sys.argv, run))
