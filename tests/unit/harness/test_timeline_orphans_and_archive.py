"""The timeline check on real tables: a read that returned rows of a file no completed
instant owns is a dirty read the check names (it judges the run's `read` events, not an
empty list), and an instant completed again after its archival is committed twice (the
archived and active timelines are read together)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from test_isolation_dirty_reads import ListingReader, commit, new_table, rows

from engine.config import TableConfig
from engine.table import Table
from engine.timeline import CommitMetadata
from engine.timeline.active import TIMELINE_DIR
from harness.runner.check_inputs import CHECKS, Inputs
from harness.runner.final_state import FinalState, _last_generated, _timeline_instants
from harness.workload.reads import perform_read


def judged(table: Table, reads: list[dict[str, Any]]) -> Any:
    """The timeline check as the runner runs it, on `table` and a history of `reads`."""
    final = FinalState(
        read_rows=table.snapshot,
        table=table,
        instants=_timeline_instants(table),
        orphan_files=[f.name for f in table.orphan_files()],
        last_generated=_last_generated(table),
    )
    events = [{"kind": "read", "reader": "reader:0", **r} for r in reads]
    inputs = Inputs(None, events, final, None, lambda _: None)  # type: ignore[arg-type]
    return CHECKS["timeline"].run(inputs)


def inflight_files(table: Table, ids: range) -> tuple[Any, set[str]]:
    """A new inflight instant that wrote `ids`, and the names of the files it wrote."""
    inflight = table.start_instant()
    written = {s.file_name for s in table.write_files(inflight, rows(ids), op="insert")}
    return inflight, written


def orphans_named(result: Any) -> set[str]:
    return {item["file"] for item in result.evidence["orphans_read"]["items"]}


def test_a_read_of_a_rolled_back_instants_file_is_invalid_and_named(tmp_path: Path) -> None:
    table = new_table(tmp_path)
    commit(table, range(10))
    inflight, written = inflight_files(table, range(10, 15))
    dirty = perform_read(ListingReader(table), "snapshot")  # type: ignore[arg-type]
    clean = perform_read(table, "snapshot")
    table.rollback(inflight)
    assert set(dirty["files"]) >= written and not set(clean["files"]) & written

    r = judged(table, [clean, dirty])
    assert r.verdict == "invalid"
    assert orphans_named(r) == written
    assert sum(i["rows"] for i in r.evidence["orphans_read"]["items"]) == 5
    assert judged(table, [clean]).verdict == "valid"


def test_a_read_of_a_file_the_instants_commit_left_out_is_invalid(tmp_path: Path) -> None:
    """The instant completes, but with files written again: the ones read before are no
    completed instant's (the isolation check sees only that the instant completed)."""
    table = new_table(tmp_path)
    commit(table, range(10))
    inflight, first = inflight_files(table, range(10, 15))
    dirty = perform_read(ListingReader(table), "snapshot")  # type: ignore[arg-type]
    table.commit(inflight, table.write_files(inflight, rows(range(10, 15)), op="insert"))
    assert set(dirty["files"]) >= first

    r = judged(table, [dirty, perform_read(table, "snapshot")])
    assert r.verdict == "invalid" and orphans_named(r) == first


def test_reads_that_name_no_file_for_some_rows_are_unknown(tmp_path: Path) -> None:
    table = new_table(tmp_path)
    commit(table, range(10))
    read = perform_read(table, "snapshot")
    [(name, n)] = read["files"].items()
    unnamed = {**read, "files": {name: n - 1}}  # one row whose file name was null
    unrecorded = {k: v for k, v in read.items() if k != "files"}
    assert judged(table, [read]).verdict == "valid"
    for bad in (unnamed, unrecorded):
        r = judged(table, [read, bad])
        assert r.verdict == "unknown" and "1 reads do not name" in r.evidence["reason"]


def test_the_engines_own_reads_of_a_compacted_archived_mor_table_are_valid(
    tmp_path: Path,
) -> None:
    table = Table.create(
        str(tmp_path / "t"), TableConfig(table_type="mor", file_groups=2), rows(range(0)).schema
    )
    for k in range(6):
        instant = table.start_instant()
        table.commit(instant, table.write_files(instant, rows(range(3 * k, 3 * k + 10))))
        if k == 2:
            table.run_compaction(table.schedule_compaction() or "")
    assert table.archive(keep=2) > 0
    times = [i.completed_at for i in table.timeline.reload().completed(True)]
    reads = [perform_read(table, "snapshot")]
    reads += [perform_read(table, "as_of", as_of=t) for t in times]
    reads.append(perform_read(table, "incremental", begin=times[0], end=times[-1]))
    assert any(".log." in f for r in reads for f in r["files"])  # logs are judged too
    r = judged(table, reads)
    assert r.verdict == "valid", r.evidence
    assert r.evidence["reads"] == len(reads)


# --- completions of archived instants -------------------------------------------------------


def complete_again(table: Table, requested: str) -> str:
    """Write a second completed file for the archived instant `requested` by hand, with a
    newly generated completion time and its number: what a zombie's commit would leave."""
    archive = table.timeline.archive
    meta = CommitMetadata.from_avro_bytes(archive.metadata_bytes(requested), "archived")
    again = table.generator.generate_stamped()
    data = dataclasses.replace(meta, completion_seq=again.seq).to_avro_bytes()
    action = archive.get(requested).action  # type: ignore[union-attr]
    table.storage.write_bytes(f"{TIMELINE_DIR}/{requested}_{again.time}.{action}", data)
    return again.time


def archived_table(tmp_path: Path) -> tuple[Table, str]:
    table = new_table(tmp_path)
    for k in range(4):
        commit(table, range(10 * k, 10 * k + 10))
    first = table.timeline.reload().completed()[0].requested_time
    assert table.archive(keep=2) == 2
    assert table.timeline.reload().archive.get(first) is not None
    return table, first


def test_a_completion_of_an_archived_instant_is_a_second_commit(tmp_path: Path) -> None:
    table, first = archived_table(tmp_path)
    assert judged(table, []).verdict == "valid"
    again = complete_again(table, first)
    table.timeline.reload()

    r = judged(table, [])
    assert r.verdict == "invalid", r.evidence
    [twice] = r.evidence["committed_twice"]["items"]
    assert twice["instant"] == first and twice["count"] == 2
    assert again in twice["completion_times"]
    assert (
        r.evidence["generation_order"]["sequence_clashes"]["count"] == 0
    )  # judged on numbered evidence


def test_two_archived_completions_of_one_instant_stay_two(tmp_path: Path) -> None:
    """Archived again, the second completion is a second archived row: the archive keeps
    one per requested time for reads, but the judge counts every row, through the
    archive's own compaction of its runs too."""
    table, first = archived_table(tmp_path)
    complete_again(table, first)
    for k in range(2):  # the second completion is the newest commit until these
        commit(table, range(100 + 10 * k, 110 + 10 * k))
    assert table.archive(keep=2) == 3
    active = table.timeline.reload().instants()
    assert first not in {i.requested_time for i in active}  # both completions archived
    archive = table.timeline.archive
    archive.batch = 2
    archive._compact()  # merges the two level-0 runs into one
    assert (
        len({r.completion_time for r in archive.reload().rows() if r.requested_time == first}) == 2
    )

    r = judged(table, [])
    assert r.verdict == "invalid" and r.evidence["committed_twice"]["count"] == 1
