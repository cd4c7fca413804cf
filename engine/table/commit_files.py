"""The files a commit lists, checked before the lock: which of an instant's write stats
are in effect (a later flush supersedes an earlier one; one writer per file group), and
whether every listed file is whole on storage."""

from __future__ import annotations

import pyarrow as pa

from engine.errors import CorruptFileError, EngineError
from engine.layout.file_names import parse_data_file
from engine.storage import Storage
from engine.table.data_files import data_schema
from engine.table.properties import encode_schema
from engine.table.stats import WriteStat


def effective_stats(stats: list[WriteStat], t: str) -> tuple[list[WriteStat], list[str]]:
    """Drop files a later flush of the same instant superseded; one base per group."""
    foreign = [s.file_name for s in stats if s.instant != t]
    if foreign:
        raise EngineError(f"stats of other instants passed to commit of {t}: {foreign}")
    names = {s.file_name for s in stats}
    superseded = {s.prev_file for s in stats if s.prev_file in names}
    effective = [s for s in stats if s.file_name not in superseded]
    bases: dict[str, str] = {}
    for s in effective:
        if s.kind == "base":
            if s.file_id in bases and bases[s.file_id] != s.file_name:
                raise EngineError(
                    f"instant {t} has two base files for file group {s.file_id}: "
                    f"{bases[s.file_id]} and {s.file_name}: in a COW table each file group may be"
                    " written by one task per instant (route rows by bucket_of_keys), and a"
                    " task's later flush must pass its earlier stats as prior"
                )
            bases[s.file_id] = s.file_name
    unique = list({s.file_name: s for s in effective}.values())
    _one_writer_per_group(unique, t)
    return unique, sorted(superseded)


def _one_writer_per_group(stats: list[WriteStat], t: str) -> None:
    """A writer numbers its logs of a group from 1 up (later flushes pass `prior`), so two
    logs of one version in one group are two writers of that group in one instant, which
    routing by file group forbids (Hudi's bucket assigner)."""
    seen: dict[tuple[str, int], str] = {}
    for s in stats:
        f = parse_data_file(s.file_name) if s.kind == "log" else None
        if f is None:
            continue
        other = seen.setdefault((s.file_id, f.version), s.file_name)
        if other != s.file_name:
            raise EngineError(
                f"instant {t} has two writers of file group {s.file_id}: {other} and"
                f" {s.file_name}: in one instant one task writes a file group (route rows by"
                " engine.layout.index.route_keys / owner_tasks)"
            )


def file_problem(storage: Storage, stats: list[WriteStat]) -> CorruptFileError | None:
    """Why a completed instant could not reference these files (missing or torn)."""
    sizes = storage.sizes(s.file_name for s in stats)
    for s in stats:
        actual = sizes[s.file_name]
        if actual is None:
            return CorruptFileError(storage.full_path(s.file_name), "missing at commit")
        if actual != s.file_size:
            return CorruptFileError(
                storage.full_path(s.file_name),
                f"{actual} bytes at commit, {s.file_size} written (torn write?)",
            )
    return None


def schema_text(storage: Storage, schema: pa.Schema | None, stats: list[WriteStat]) -> str | None:
    """The schema a commit records: the table's, else the first file's with data columns."""
    for s in stats if schema is None else []:  # the first file with data columns
        schema = data_schema(storage, s.file_name)
        if schema is not None:
            break
    return encode_schema(schema) if schema is not None else None
