"""Commit metadata: the one typed model of what an instant records, and its two encodings.

Completed instants hold an Avro object container file (written by engine.timeline.avro,
read with fastavro) with one Apache Hudi 1.x `HoodieCommitMetadata` record, what Hudi
readers parse in timeline layout 2: the write stats under `partitionToWriteStats[""]`
(the table is not partitioned), the operation as `operationType`, and every engine field
in `extraMetadata` (map<string, string>, each value JSON text), except `schema`, which
holds the table's Avro schema as Hudi readers expect. A completed clean holds Hudi's
`HoodieCleanMetadata` record instead (engine.timeline.clean_metadata), with the same
`extraMetadata`. Pending (requested) files hold the same model as one JSON object: the
engine reads them, Hudi readers never do.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from engine.errors import CorruptInstantError
from engine.timeline.avro import ContainerCodec, optional_field
from engine.timeline.clean_metadata import CODEC as CLEAN_CODEC
from engine.timeline.clean_metadata import PLAN_KEY, clean_record
from engine.timeline.compaction_plan import CODEC as COMPACTION_CODEC
from engine.timeline.compaction_plan import compaction_plan_record

if TYPE_CHECKING:
    from engine.table.stats import WriteStat

CLEAN_ACTION = "clean"
COMPACTION_ACTION = "compaction"
AVRO_MAGIC = b"Obj\x01"  # an Avro object container file's first bytes
PARTITION = ""  # non-partitioned: Hudi's partition path is the empty string
_HUDI_OPS = {"insert": "INSERT", "upsert": "UPSERT", "delete": "DELETE", "compact": "COMPACT"}
_ENGINE_OPS = {v: k for k, v in _HUDI_OPS.items()}
AVRO_SCHEMA_KEY = "schema"  # Hudi's extraMetadata key for the writer's Avro schema
# extraMetadata keys with per-file engine values Hudi's write stat has no field for.
_STAT_EXTRAS_KEY = "write_stat_extras"


def reserved_keys() -> frozenset[str]:
    """Keys the engine's own fields take in the flat form: caller metadata may not use them."""
    names = {f.name for f in fields(CommitMetadata)} - {"extra", "rollback"}
    names |= {f"rollback_{f.name}" for f in fields(RollbackRecord)}
    names |= {AVRO_SCHEMA_KEY, _STAT_EXTRAS_KEY}
    names |= {"file_groups", "num_files", "num_writes", "num_deletes", "num_inserts"}
    return frozenset(names)


# Apache Hudi 1.x hudi-common/src/main/avro/HoodieCommitMetadata.avsc (the fields a
# non-partitioned writer fills; readers resolve the rest to their defaults).
_WRITE_STAT = {
    "type": "record",
    "name": "HoodieWriteStat",
    "fields": [
        optional_field("fileId", "string"),
        optional_field("path", "string"),
        optional_field("prevCommit", "string"),
        optional_field("numWrites", "long"),
        optional_field("numDeletes", "long"),
        optional_field("numUpdateWrites", "long"),
        optional_field("totalWriteBytes", "long"),
        optional_field("totalWriteErrors", "long"),
        optional_field("partitionPath", "string"),
        optional_field("totalLogRecords", "long"),
        optional_field("totalLogFiles", "long"),
        optional_field("numInserts", "long"),
        optional_field("fileSizeInBytes", "long"),
        optional_field("logVersion", "int"),
        optional_field("logOffset", "long"),
        optional_field("baseFile", "string"),
        optional_field("logFiles", {"type": "array", "items": "string"}),
        optional_field("prevBaseFile", "string"),
    ],
}
HOODIE_COMMIT_METADATA = {
    "namespace": "org.apache.hudi.avro.model",
    "type": "record",
    "name": "HoodieCommitMetadata",
    "fields": [
        optional_field(
            "partitionToWriteStats",
            {"type": "map", "values": {"type": "array", "items": _WRITE_STAT}},
        ),
        optional_field("compacted", "boolean"),
        optional_field("extraMetadata", {"type": "map", "values": "string"}),
        {"name": "version", "type": ["int", "null"], "default": 1},
        optional_field("operationType", "string"),
    ],
}
_CODEC = ContainerCodec(HOODIE_COMMIT_METADATA)


@dataclass
class RollbackRecord:
    """What a rollback instant records of the instant it removed."""

    rolled_back: str  # requested time of the target
    action: str
    state: str
    # The target's generated times with their sequence numbers (engine.timeline.sequence).
    generated: list[dict[str, Any]] | None = None
    deleted_files: list[str] | None = None  # set on completion


@dataclass
class CommitMetadata:
    stats: list[WriteStat] = field(default_factory=list)
    operation: str | None = None  # engine ops joined by ',' (upsert, insert, delete, compact)
    writer_id: str | None = None
    requested_seq: int | None = None
    completion_seq: int | None = None
    occ_baseline: str | None = None  # largest completion time when the instant started
    superseded: list[str] = field(default_factory=list)  # files a later flush replaced
    arrow_schema: str | None = None  # the table's schema, base64 Arrow IPC (engine reads)
    avro_schema: str | None = None  # the same as Hudi's Avro record schema (Hudi readers)
    fence: str | None = None  # the epoch / lock token the commit was made under
    # A requested compaction's plan: [{file_id, base, logs}].
    compaction_plan: list[dict[str, Any]] | None = None
    compacted: list[str] | None = None  # completed compaction: the files it merged
    rollback: RollbackRecord | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # the caller's keys (JSON values)

    # -- derived -------------------------------------------------------------------------

    @property
    def file_groups(self) -> list[str]:
        return sorted({s.file_id for s in self.stats})

    @property
    def num_files(self) -> int:
        return len(self.stats)

    @property
    def num_writes(self) -> int:
        return sum(s.num_writes for s in self.stats)

    @property
    def num_deletes(self) -> int:
        return sum(s.num_deletes for s in self.stats)

    @property
    def num_inserts(self) -> int:
        return sum(s.num_inserts or 0 for s in self.stats)

    # -- the engine's JSON form (pending files) --------------------------------------------

    def to_dict(self, with_stats: bool = True) -> dict[str, Any]:
        """Flat JSON-safe dict: engine fields under their names, the caller's keys beside
        them (reserved_keys() keeps them apart), Nones and empty lists left out."""
        out: dict[str, Any] = dict(self.extra)
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("extra", "stats", "rollback") or value is None or value == []:
                continue
            out[f.name] = value
        if self.stats and with_stats:
            out["stats"] = [s.to_dict(with_keys=False) for s in self.stats]
        if self.rollback is not None:
            rb = {f"rollback_{k}": v for k, v in vars(self.rollback).items() if v is not None}
            out.update(rb)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CommitMetadata:
        from engine.table.stats import WriteStat  # engine.table imports the timeline

        data = dict(data)
        rb_keys = {f"rollback_{f.name}": f.name for f in fields(RollbackRecord)}
        rb = {rb_keys[k]: data.pop(k) for k in list(data) if k in rb_keys}
        known = {f.name for f in fields(cls)} - {"extra", "stats", "rollback"}
        kwargs: dict[str, Any] = {k: data.pop(k) for k in list(data) if k in known}
        stats = [WriteStat.from_dict(s) for s in data.pop("stats", [])]
        return cls(
            stats=stats,
            rollback=RollbackRecord(**rb) if rb else None,
            extra=data,
            **kwargs,
        )

    def to_json_bytes(self) -> bytes:
        return json.dumps(self.to_dict(), separators=(",", ":"), default=str).encode()

    @classmethod
    def from_json_bytes(cls, data: bytes, file: str) -> CommitMetadata:
        meta = _decoded(data, file, json.loads, ValueError, "not valid JSON")
        if not isinstance(meta, dict):
            raise CorruptInstantError(file, "metadata is not a JSON object")
        return cls.from_dict(meta)

    # -- Hudi's Avro form (completed files) ------------------------------------------------

    def to_avro_bytes(self, action: str = "commit", instant_time: str = "") -> bytes:
        """The completed file of an `action` instant requested at `instant_time`: Hudi's
        HoodieCommitMetadata, or for a clean its HoodieCleanMetadata."""
        if action == CLEAN_ACTION:  # Hudi's record has no operation: the engine's is kept
            extra, _, _ = self._extra_text(keep_operation=True)
            return CLEAN_CODEC.write(clean_record(instant_time, self.extra.get(PLAN_KEY), extra))
        extra, hudi_op, op = self._extra_text()
        record = {
            "partitionToWriteStats": {PARTITION: [_hoodie_stat(s) for s in self.stats]},
            "compacted": self.compacted is not None,
            "extraMetadata": extra,
            "version": 1,
            "operationType": hudi_op or ("UNKNOWN" if op is not None else None),
        }
        return _CODEC.write(record)

    def _extra_text(
        self, keep_operation: bool = False
    ) -> tuple[dict[str, str], str | None, str | None]:
        """(Hudi's extraMetadata: every engine field as JSON text, Hudi's operation type,
        the engine's operation). The operation stays in extraMetadata when Hudi's type
        does not say it, or `keep_operation` (a record with no operation type)."""
        flat = self.to_dict(with_stats=False)
        flat.pop("avro_schema", None)
        op = flat.pop("operation", None)
        hudi_op = _HUDI_OPS.get(op) if op is not None else None
        if op is not None and (hudi_op is None or keep_operation):
            flat["operation"] = op  # several ops (or none Hudi names): kept verbatim
        extra = {k: json.dumps(v, separators=(",", ":"), default=str) for k, v in flat.items()}
        if self.avro_schema is not None:
            extra[AVRO_SCHEMA_KEY] = self.avro_schema
        if self.stats:
            extra[_STAT_EXTRAS_KEY] = json.dumps(
                {s.file_name: [s.op, s.num_writes, s.num_rows] for s in self.stats},
                separators=(",", ":"),
            )
        return extra, hudi_op, op

    def to_requested_bytes(self, action: str) -> bytes:
        """A requested file: the engine's JSON, or for a compaction Hudi's Avro plan."""
        if action == COMPACTION_ACTION and self.compaction_plan is not None:
            extra, _, _ = self._extra_text(keep_operation=True)
            return COMPACTION_CODEC.write(compaction_plan_record(self.compaction_plan, extra))
        return self.to_json_bytes()

    @classmethod
    def from_pending_bytes(cls, data: bytes, file: str) -> CommitMetadata:
        """A requested file, JSON or (a compaction's plan) Avro."""
        if data.startswith(AVRO_MAGIC):
            return cls.from_avro_bytes(data, file)
        return cls.from_json_bytes(data, file)

    @classmethod
    def from_avro_bytes(cls, data: bytes, file: str) -> CommitMetadata:
        # fastavro raises several types on bad input; a clean's record is read the same way
        records = _decoded(data, file, _CODEC.read, Exception, "not an Avro HoodieCommitMetadata")
        if len(records) != 1 or not isinstance(records[0], dict):
            raise CorruptInstantError(file, f"{len(records)} Avro records, expected one")
        return _from_record(records[0], file)


def _decoded(
    data: bytes,
    file: str,
    decode: Callable[[bytes], Any],
    errors: type[Exception],
    what: str,
) -> Any:
    """`decode(data)`; an empty file (a torn write) or one `decode` refuses is corrupt."""
    if not data:
        raise CorruptInstantError(file, "empty file (torn write?)")
    try:
        return decode(data)
    except errors as e:
        raise CorruptInstantError(file, f"{what} ({e})") from None


def _hoodie_stat(s: WriteStat) -> dict[str, Any]:
    from engine.layout.file_names import LOG, parse_data_file

    prev = parse_data_file(s.prev_file) if s.prev_file else None
    is_log = s.kind == LOG
    parsed = parse_data_file(s.file_name) if is_log else None
    return {
        "fileId": s.file_id,
        "path": s.file_name,  # relative to the table's base path
        "prevCommit": prev.instant if prev is not None else "null",
        "numWrites": s.num_rows,  # Hudi: records written to the file
        "numDeletes": s.num_deletes,
        "numUpdateWrites": None,
        "totalWriteBytes": s.file_size,
        "totalWriteErrors": 0,
        "partitionPath": PARTITION,
        "totalLogRecords": s.num_rows if is_log else None,
        "totalLogFiles": 1 if is_log else None,
        "numInserts": s.num_inserts,
        "fileSizeInBytes": s.file_size,
        "logVersion": parsed.version if parsed is not None else None,
        "logOffset": 0 if is_log else None,
        "baseFile": None,
        "logFiles": [s.file_name] if is_log else None,
        "prevBaseFile": s.prev_file,
    }


def _from_record(record: dict[str, Any], file: str) -> CommitMetadata:
    from engine.layout.file_names import parse_data_file
    from engine.table.stats import WriteStat  # engine.table imports the timeline

    extra_text: dict[str, str] = dict(record.get("extraMetadata") or {})
    avro_schema = extra_text.pop(AVRO_SCHEMA_KEY, None)
    try:
        flat = {k: json.loads(v) for k, v in extra_text.items()}
    except ValueError as e:
        raise CorruptInstantError(file, f"extraMetadata value is not JSON ({e})") from None
    per_file = flat.pop(_STAT_EXTRAS_KEY, {})
    stats = []
    for hs in (record.get("partitionToWriteStats") or {}).get(PARTITION, []):
        name = hs["path"]
        parsed = parse_data_file(name)
        if parsed is None:
            raise CorruptInstantError(file, f"write stat path {name!r} is not a data file name")
        op, num_writes, num_rows = per_file.get(name, [None, hs.get("numWrites"), None])
        stats.append(
            WriteStat(
                file_id=hs["fileId"],
                file_name=name,
                kind=parsed.kind,
                instant=parsed.instant,
                write_token=parsed.write_token,
                op=op,
                num_rows=num_rows if num_rows is not None else hs.get("numWrites") or 0,
                num_writes=num_writes or 0,
                num_deletes=hs.get("numDeletes") or 0,
                num_inserts=hs.get("numInserts"),
                file_size=hs.get("fileSizeInBytes") or 0,
                prev_file=hs.get("prevBaseFile"),
            )
        )
    if "operation" not in flat and record.get("operationType") in _ENGINE_OPS:
        flat["operation"] = _ENGINE_OPS[record["operationType"]]
    meta = CommitMetadata.from_dict(flat)
    meta.stats, meta.avro_schema = stats, avro_schema
    if meta.rollback is None and record.get("commitsRollback"):
        meta.rollback = _hudi_rollback(record)
    return meta


def _hudi_rollback(record: dict[str, Any]) -> RollbackRecord:
    """A rollback Apache Hudi wrote (its HoodieRollbackMetadata): the instant it removed and
    the files it deleted. Hudi records no state of the target; it rolls back only what
    never completed."""
    target = record["commitsRollback"][0]
    actions = {i.get("commitTime"): i.get("action") for i in record.get("instantsRollback") or []}
    deleted = [
        posixpath.basename(path)
        for partition in (record.get("partitionMetadata") or {}).values()
        for path in partition.get("successDeleteFiles") or []
    ]
    return RollbackRecord(target, actions.get(target) or "commit", "inflight", None, deleted)
