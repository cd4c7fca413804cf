"""Java Hudi's answers held against the engine's table (probe_table.disagreements), without
a JVM: the answers are made up here, the table is the engine's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from engine.config import TableConfig
from engine.layout.file_names import parse_data_file
from engine.table import Table
from engine.table.properties import MERGE_MODE, MERGE_PAYLOAD_CLASS, MERGE_STRATEGY_ID
from engine.timeline.active import TIMELINE_DIR
from harness.systems.hudi.probe_table import disagreements


def _mor(path: Path) -> Table:
    t = Table.create(str(path), TableConfig(table_type="mor", file_groups=1), max_skew_ms=0)
    for v in (0, 1):  # a base file, then a log file
        with t.transaction() as tx:
            tx.write(pa.table({"id": [1, 2], "v": [v, v]}))
    return t


def _agreeing(t: Table) -> dict[str, Any]:
    """What Java Hudi answers when it reads every file as the engine wrote it."""
    files = []
    for name in sorted(n for n in t.storage.list("") if not n.startswith(".hoodie")):
        f = parse_data_file(name)
        assert f is not None
        entry = {"name": name, "is_base": f.kind == "base", "is_log": f.kind == "log"}
        entry |= {"file_id": f.file_id, "instant": f.instant, "write_token": f.write_token}
        if f.kind == "log":
            parts = [int(p) for p in f.write_token.split("-")]
            entry |= {"version": f.version, "token_parts": parts}
        files.append(entry)
    merge = [MERGE_MODE, MERGE_PAYLOAD_CLASS, MERGE_STRATEGY_ID]
    # Two completed deltacommits: their pending files are gone.
    listed = set(t.storage.list(TIMELINE_DIR)) - {"history"}
    assert listed == {i.file_name for i in t.timeline.instants()}
    timeline = {
        i.file_name: [i.requested_time, i.completion_time, "deltacommit", "COMPLETED", i.file_name]
        for i in t.timeline.instants()
    }
    base, logs = t.view().latest("fg-0000")
    return {
        "files": files,
        "properties": {"checksum_valid": True, "merge": merge, "inferred": merge, "builder": {}},
        "timeline": {
            "files": timeline,
            "active": [v[:4] for v in timeline.values()],
            "archived": [],
        },
        "slices": {
            "fg-0000": {"base": base.name if base else None, "logs": [x.name for x in logs]}
        },
        "snapshot": [{"id": 1, "v": 1}, {"id": 2, "v": 1}],
    }


def test_an_answer_like_the_engine_s_own_reading_has_no_disagreement(tmp_path: Path) -> None:
    t = _mor(tmp_path / "t")
    assert disagreements(tmp_path / "t", _agreeing(t)) == []
    t.close()


def test_each_way_java_hudi_reads_the_table_otherwise_is_named(tmp_path: Path) -> None:
    t = _mor(tmp_path / "t")
    answer = _agreeing(t)
    log = next(f for f in answer["files"] if f["is_log"])
    log |= {"is_log": False}  # FSUtils.isLogFile said no
    answer["properties"] |= {"merge": [None, "x", None], "builder": {"hoodie.table.version": "9"}}
    (name, parsed), *_ = answer["timeline"]["files"].items()
    parsed[4] = "other-name"
    answer["slices"]["fg-0000"]["logs"] = []
    answer["snapshot"] = [{"id": 1, "v": 0}, {"id": 2, "v": 0}]
    found = disagreements(tmp_path / "t", answer)
    assert f"file {log['name']}: not a log file to Hudi (FSUtils.isLogFile)" in found
    assert any(d.startswith("hoodie.properties: merge mode None to Hudi") for d in found)
    assert "hoodie.properties: hoodie.table.version='8', Hudi's builder writes '9'" in found
    assert any(d.startswith(f"timeline file {name}:") for d in found)
    assert any(d.startswith("file group fg-0000: Hudi merges") for d in found)
    assert any(d.startswith("snapshot: 2 of 2 keys differ") for d in found)
    answer["slices"] = {"error": "java.io.IOException: unable to read commit metadata"}
    assert "slices: java.io.IOException: unable to read commit metadata" in disagreements(
        tmp_path / "t", answer
    )
    t.close()
