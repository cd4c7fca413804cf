"""`.hoodie/hoodie.properties`: Java-properties `key=value` lines, as Apache Hudi 1.x writes
them (table version 8, timeline layout 2), so Hudi readers open the table. The engine's
own config rides under `instantbench.*` keys, which Hudi ignores.

The Hudi format versions the engine writes are defined here, and nowhere else.
"""

from __future__ import annotations

import base64
import functools
import json
import posixpath
import zlib
from dataclasses import dataclass

import pyarrow as pa

from engine.config import TableConfig
from engine.errors import NotATableError
from engine.storage import Storage
from engine.table.avro_schema import avro_schema_json

PROPERTIES = ".hoodie/hoodie.properties"
TABLE_VERSION = 8
TIMELINE_LAYOUT_VERSION = 2
# The engine's own on-disk format (1: JSON properties and JSON instants, before Hudi's;
# 2: write tokens Java Hudi does not take and no merge mode in these properties; 3: the
# engine's own rows and manifests in the archived timeline).
FORMAT_VERSION = 4
HUDI_TABLE_TYPES = {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}
CONFIG_KEY = "instantbench.table.config"
SCHEMA_KEY = "instantbench.table.schema"
FORMAT_KEY = "instantbench.format.version"
# How Hudi merges two instants' rows of one key, as the engine does: the row of the instant
# merged later wins, whatever the ordering field holds (that field only settles duplicates
# within one write, engine/table/merge.py precombine). Hudi's COMMIT_TIME_ORDERING, with the
# payload class and merge strategy id Java Hudi pairs with it for a table before version 9
# (HoodieTableConfig.inferMergingConfigsForPreV9Table): Java Hudi cannot merge a log
# without them (a NullPointerException on the merge mode).
MERGE_MODE = "COMMIT_TIME_ORDERING"
# Tables Apache Hudi wrote that the engine reads (never writes): version 9 is Hudi 1.1+'s
# default, 8 Hudi 1.0's; their merge modes, by commit time or by the ordering field.
HUDI_READ_VERSIONS = {"8", "9"}
READ_MERGE_MODES = ("COMMIT_TIME_ORDERING", "EVENT_TIME_ORDERING")
MERGE_PAYLOAD_CLASS = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
MERGE_STRATEGY_ID = "ce9acb64-bde0-424c-9b91-f6ebba25356d"  # COMMIT_TIME_BASED_MERGE_STRATEGY_UUID


@dataclass(frozen=True)
class TableProperties:
    config: TableConfig
    schema: pa.Schema | None
    # A table Apache Hudi wrote (the engine reads it, never writes): how its rows merge.
    hudi_merge_mode: str | None = None


def hudi_table_properties(storage: Storage, props: dict[str, str]) -> TableProperties:
    """The engine's view of a table Apache Hudi wrote: its type, record key, ordering
    field and merge mode; the schema comes from its commits. A layout the engine cannot
    read (partitions, composite keys, a merge mode other than by commit or event time)
    is refused, naming the key."""
    kinds = {hudi: kind for kind, hudi in HUDI_TABLE_TYPES.items()}
    wanted = {
        "hoodie.table.type": lambda v: v in kinds,
        "hoodie.table.recordkey.fields": lambda v: bool(v) and "," not in v,
        "hoodie.table.partition.fields": lambda v: v == "",
        "hoodie.table.base.file.format": lambda v: v == "PARQUET",
        "hoodie.timeline.layout.version": lambda v: v == str(TIMELINE_LAYOUT_VERSION),
        "hoodie.record.merge.mode": lambda v: v in READ_MERGE_MODES,
    }
    for key, allowed in wanted.items():
        if not allowed(props.get(key, "")):
            raise NotATableError(
                storage.root,
                f"written by Apache Hudi with {key}={props.get(key, '')!r}: this engine reads "
                "non-partitioned Parquet tables of one record key, timeline layout "
                f"{TIMELINE_LAYOUT_VERSION}, merge mode {' or '.join(READ_MERGE_MODES)}",
            )
    ordering = props.get("hoodie.table.ordering.fields") or props.get(
        "hoodie.table.precombine.field"
    )
    config = TableConfig(
        table_type=kinds[props["hoodie.table.type"]],
        key_field=props["hoodie.table.recordkey.fields"],
        ordering_field=ordering or None,
    )
    return TableProperties(config, None, props["hoodie.record.merge.mode"])


def encode_schema(schema: pa.Schema) -> str:
    return base64.b64encode(schema.serialize().to_pybytes()).decode()


def decode_schema(text: str) -> pa.Schema:
    return pa.ipc.read_schema(pa.BufferReader(base64.b64decode(text)))


@functools.lru_cache(maxsize=64)
def avro_schema_of(schema_text: str | None, name: str) -> str | None:
    """Hudi's Avro schema of a schema in encode_schema's form (commits record it)."""
    return avro_schema_json(decode_schema(schema_text), name) if schema_text else None


def table_name(storage: Storage) -> str:
    return posixpath.basename(storage.root.rstrip("/")) or "table"


def hudi_properties(config: TableConfig, schema: pa.Schema | None, name: str) -> dict[str, str]:
    """The key/value pairs of a new table's properties file."""
    # Every key Java Hudi 1.2's own table builder writes for such a table
    # (tests/systems/test_hudi_java_probe.py asks it).
    props = {
        "hoodie.table.name": name,
        "hoodie.table.type": HUDI_TABLE_TYPES[config.table_type],
        "hoodie.table.version": str(TABLE_VERSION),
        "hoodie.table.initial.version": str(TABLE_VERSION),
        "hoodie.timeline.layout.version": str(TIMELINE_LAYOUT_VERSION),
        "hoodie.timeline.path": "timeline",
        "hoodie.timeline.history.path": "history",
        "hoodie.archivelog.folder": "archived",  # layout 1's archive: Hudi writes it still
        "hoodie.table.timeline.timezone": "UTC",
        "hoodie.table.base.file.format": "PARQUET",
        "hoodie.table.recordkey.fields": config.key_field,
        "hoodie.table.partition.fields": "",
        # The type is what Hudi 1.x reads; the class, deprecated since 1.0, older readers.
        "hoodie.table.keygenerator.type": "NON_PARTITION",
        "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
        "hoodie.record.merge.mode": MERGE_MODE,
        "hoodie.compaction.payload.class": MERGE_PAYLOAD_CLASS,
        "hoodie.record.merge.strategy.id": MERGE_STRATEGY_ID,
        "hoodie.populate.meta.fields": "true",
        "hoodie.table.metadata.partitions": "",  # no metadata table: readers list storage
        # Java Hudi checks it on load: CRC32 of "<database>.<table>" (no database here).
        "hoodie.table.checksum": str(zlib.crc32(f".{name}".encode())),
    }
    if config.ordering_field:
        # Version 8's key, and the one Hudi 1.2's table builder writes (hudi-rs reads both).
        props["hoodie.table.precombine.field"] = config.ordering_field
        props["hoodie.table.ordering.fields"] = config.ordering_field
    avro = avro_schema_json(schema, name) if schema is not None else None
    if avro is not None:
        props["hoodie.table.create.schema"] = avro
    props[FORMAT_KEY] = str(FORMAT_VERSION)
    props[CONFIG_KEY] = json.dumps(config.to_dict(), sort_keys=True, separators=(",", ":"))
    if schema is not None:
        props[SCHEMA_KEY] = encode_schema(schema)
    return props


def _escape(text: str) -> str:
    # java.util.Properties: backslash escapes; ':' and '=' escaped anywhere, so the
    # first unescaped one is the separator; newlines escaped.
    return (
        text.replace("\\", "\\\\")
        .replace("\n", "\\n")
        .replace("\r", "\\r")
        .replace("=", "\\=")
        .replace(":", "\\:")
    )


def _unescape(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append({"n": "\n", "r": "\r", "t": "\t"}.get(nxt, nxt))
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def format_properties(props: dict[str, str]) -> bytes:
    return "".join(f"{_escape(k)}={_escape(v)}\n" for k, v in props.items()).encode()


def parse_properties(text: str) -> dict[str, str]:
    """key=value (or key:value) lines; '#'/'!' comments. No line continuations (Hudi
    writes none)."""
    props = {}
    for raw in text.splitlines():
        line = raw.lstrip()
        if not line or line[0] in "#!":
            continue
        i = 0
        while i < len(line) and line[i] not in "=:":
            i += 2 if line[i] == "\\" else 1
        props[_unescape(line[:i].rstrip())] = _unescape(line[i + 1 :].lstrip())
    return props


def write_properties(storage: Storage, config: TableConfig, schema: pa.Schema | None) -> None:
    """Create the properties file; FileExistsError if a table is already there."""
    props = hudi_properties(config, schema, table_name(storage))
    storage.put_if_absent(PROPERTIES, format_properties(props))


def read_properties(storage: Storage) -> TableProperties:
    try:
        text = storage.read_bytes(PROPERTIES).decode(errors="replace")
    except FileNotFoundError:
        raise NotATableError(storage.root) from None
    if text.lstrip().startswith("{"):  # instantbench format 1: a JSON document
        try:
            old = json.loads(text).get("format_version", "unknown")
        except ValueError:
            old = "unknown"
        raise NotATableError(
            storage.root,
            f"written by an older instantbench: format version {old} (JSON properties); "
            f"this engine reads format {FORMAT_VERSION}, Hudi table version {TABLE_VERSION}",
        )
    props = parse_properties(text)
    version = props.get("hoodie.table.version")
    if CONFIG_KEY not in props and version in HUDI_READ_VERSIONS:
        return hudi_table_properties(storage, props)
    if version != str(TABLE_VERSION) or CONFIG_KEY not in props:
        raise NotATableError(
            storage.root,
            f"hoodie.table.version={version}, {CONFIG_KEY} "
            f"{'present' if CONFIG_KEY in props else 'missing'}: this engine reads the Hudi "
            f"table versions {sorted(HUDI_READ_VERSIONS)}, and writes {TABLE_VERSION} tables",
        )
    if props.get(FORMAT_KEY) != str(FORMAT_VERSION):
        # Its data files' names would not parse: refused, not read as an empty table.
        raise NotATableError(
            storage.root,
            f"written by another instantbench: {FORMAT_KEY}={props.get(FORMAT_KEY)}; "
            f"this engine reads format {FORMAT_VERSION}",
        )
    schema = decode_schema(props[SCHEMA_KEY]) if props.get(SCHEMA_KEY) else None
    return TableProperties(TableConfig.from_dict(json.loads(props[CONFIG_KEY])), schema)
