"""Ask Java Hudi about tables the engine wrote, and list where its answers and the engine's differ.

`probe_tables` runs java_probe.py with the Hudi runtime's python (a JVM of its own) on one
or more tables and loads its answers; `disagreements` holds one table's answer against what
the engine means by its own files: every name parsed to the same fields, hoodie.properties
complete and consistent by Hudi's own rules, the same timeline, the same files merged per
file group, and the same snapshot rows. No disagreement means Java Hudi recognises every
file of the table as the engine wrote it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engine.layout.file_names import LOG, DataFile, parse_data_file
from engine.table import Table
from engine.table.properties import MERGE_MODE, PROPERTIES, parse_properties
from engine.timeline.active import TIMELINE_DIR
from engine.timeline.instant import COMPLETED_AS, Instant, parse_file_name
from harness.systems.spark_stream.driver_process import run_group
from harness.systems.spark_stream.runtime_cache import SparkRuntime

PROBE = Path(__file__).with_name("java_probe.py")
ANSWER = "java_probe.json"
SECTIONS = ("files", "properties", "timeline", "slices", "snapshot")


def probe_tables(
    runtime: SparkRuntime,
    tables: Sequence[str | Path],
    out_dir: str | Path,
    columns: Sequence[str] = (),
    timeout_s: float = 300.0,
) -> dict[str, dict[str, Any]]:
    """Java Hudi's answer for each table, by the table's path as given; RuntimeError naming
    the probe's log when the probe left no answer."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [str(Path(t).resolve()) for t in tables]
    config = {
        "tables": paths,
        "out": str(out / ANSWER),
        "jars": list(runtime.jars),
        "columns": list(columns) or None,
    }
    (out / "java_probe_config.json").write_text(json.dumps(config))
    cmd = [runtime.python, str(PROBE), str(out / "java_probe_config.json")]
    code = run_group(cmd, out / "java_probe.log", timeout_s)
    if not (out / ANSWER).exists():
        raise RuntimeError(f"java_probe.py left no answer (exit code {code}): {out}/java_probe.log")
    answers = json.loads((out / ANSWER).read_text())
    return {str(t): answers[p] for t, p in zip(tables, paths, strict=True)}


def disagreements(table_path: str | Path, answer: dict[str, Any]) -> list[str]:
    """Every way Java Hudi's `answer` differs from what the engine wrote at `table_path`
    (an empty list: none)."""
    out = [f"{s}: {answer[s]['error']}" for s in SECTIONS if _failed(answer.get(s))]
    table = Table.open(str(table_path))
    try:
        if not _failed(answer.get("files")):
            out += _file_names(answer["files"])
        if not _failed(answer.get("properties")):
            out += _properties(table, answer["properties"])
        if not _failed(answer.get("timeline")):
            out += _timeline(table, answer["timeline"])
        if not _failed(answer.get("slices")):
            out += _slices(table, answer["slices"])
        if not _failed(answer.get("snapshot")):
            out += _snapshot(table, answer["snapshot"])
    finally:
        table.close()
    return out


def _failed(section: Any) -> bool:
    return section is None or (isinstance(section, dict) and "error" in section)


def _expected_fields(parsed: DataFile) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "is_base": parsed.kind != LOG,
        "is_log": parsed.kind == LOG,
        "file_id": parsed.file_id,
        "instant": parsed.instant,
        "write_token": parsed.write_token,
    }
    if parsed.kind == LOG:
        fields["version"] = parsed.version
    return fields


def _file_names(files: list[dict[str, Any]]) -> list[str]:
    out = []
    for entry in files:
        name = entry["name"]
        parsed = parse_data_file(name)
        if "error" in entry:
            out.append(f"file {name}: {entry['error']}")
        elif parsed is None:
            if entry["is_base"] or entry["is_log"]:
                out.append(f"file {name}: Hudi takes it for a data file, the engine does not")
        else:
            out += _file_fields(name, parsed, entry)
    return out


def _file_fields(name: str, parsed: DataFile, entry: dict[str, Any]) -> list[str]:
    want = _expected_fields(parsed)
    if (entry["is_base"], entry["is_log"]) != (want["is_base"], want["is_log"]):
        return [
            f"file {name}: not a {parsed.kind} file to Hudi (FSUtils.is{parsed.kind.title()}File)"
        ]
    out = [
        f"file {name}: {field} is {entry.get(field)!r} to Hudi, {value!r} written"
        for field, value in want.items()
        if entry.get(field) != value
    ]
    # Hudi's parts of a log's token (<task partition>-<stage>-<attempt>, each an int)
    # make the token again: nothing of it is lost or read as something else.
    parts = entry.get("token_parts") or []
    if parsed.kind == LOG and "-".join(map(str, parts)) != parsed.write_token:
        out.append(f"file {name}: write token parts {parts} to Hudi")
    return out


def _properties(table: Table, props: dict[str, Any]) -> list[str]:
    out = []
    written = parse_properties(table.storage.read_bytes(PROPERTIES).decode())
    if not props["checksum_valid"]:
        out.append("hoodie.properties: Hudi finds its checksum invalid")
    if props["merge"][0] != MERGE_MODE:
        out.append(f"hoodie.properties: merge mode {props['merge'][0]} to Hudi, not {MERGE_MODE}")
    if props["inferred"] != props["merge"]:
        out.append(
            f"hoodie.properties: merge configs {props['merge']}, Hudi infers {props['inferred']}"
        )
    if _failed(props["builder"]):
        out.append(f"hoodie.properties: Hudi's table builder fails: {props['builder']['error']}")
        return out
    for key, value in sorted(props["builder"].items()):
        if written.get(key) != value:
            out.append(
                f"hoodie.properties: {key}={written.get(key)!r}, Hudi's builder writes {value!r}"
            )
    return out


def _as_hudi(instant: Instant) -> list[str | None]:
    """An instant as Hudi names it: a completed compaction is a commit."""
    action = (
        COMPLETED_AS.get(instant.action, instant.action) if instant.is_completed else instant.action
    )
    return [instant.requested_time, instant.completion_time, action, instant.state.upper()]


def _timeline(table: Table, timeline: dict[str, Any]) -> list[str]:
    out = []
    names = [n for n in table.storage.list(TIMELINE_DIR) if "/" not in n]
    for name in sorted(set(names) | set(timeline["files"])):
        mine = parse_file_name(name)
        hudi = timeline["files"].get(name)
        # Hudi's parse of the name, then the name Hudi gives what it parsed: the name again.
        want = [*_as_hudi(mine), name] if mine is not None else None
        if hudi != want and not (mine is None and _failed(hudi)):
            out.append(f"timeline file {name}: {hudi} to Hudi, {want} written")
    active = sorted(_as_hudi(i) for i in table.timeline.reload().instants())
    if sorted(timeline["active"]) != active:
        out.append(f"active timeline: {sorted(timeline['active'])} to Hudi, {active} written")
    archived = sorted(_as_hudi(i) for i in table.timeline.archive.reload().instants())
    if sorted(timeline["archived"]) != archived:
        out.append(
            f"archived timeline: {len(timeline['archived'])} instants to Hudi, "
            f"{len(archived)} written"
        )
    return out


def _slices(table: Table, slices: dict[str, Any]) -> list[str]:
    out = []
    view = table.view()
    for fid in sorted(set(view.file_ids()) | set(slices)):
        base, logs = view.latest(fid)
        want = {"base": base.name if base else None, "logs": sorted(log.name for log in logs)}
        hudi = slices.get(fid)
        got = {"base": hudi["base"], "logs": hudi["logs"]} if hudi else None
        if got != want:
            out.append(f"file group {fid}: Hudi merges {got}, the engine {want}")
    return out


def _snapshot(table: Table, rows: list[dict[str, Any]]) -> list[str]:
    key = table.config.key_field
    columns = sorted(rows[0]) if rows else [key]
    engine_rows = table.snapshot(columns=columns).to_pylist()
    mine = {r[key]: r for r in engine_rows}
    hudi = {r[key]: r for r in rows}
    wrong = sorted(k for k in set(mine) | set(hudi) if mine.get(k) != hudi.get(k))
    if not wrong:
        return []
    shown = ", ".join(f"{k}: {hudi.get(k)} to Hudi, {mine.get(k)} written" for k in wrong[:5])
    return [f"snapshot: {len(wrong)} of {len(mine)} keys differ ({shown})"]
