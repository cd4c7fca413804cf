"""The runner's view of Hudi's commit log: timeline files in order of appearance, judged."""

from __future__ import annotations

import time
from pathlib import Path

from harness.systems.hudi.timeline_watch import SeenInstant, TimelineWatch, judge, parse_instant


def seen(poll: int, name: str) -> SeenInstant:
    parsed = parse_instant(name)
    assert parsed is not None, name
    return SeenInstant(float(poll), poll, name, *parsed)


def sequence(*polls: list[str]) -> list[SeenInstant]:
    return [seen(i, name) for i, names in enumerate(polls) for name in names]


def test_every_timeline_file_form_parses() -> None:
    assert parse_instant("20261128193402051.deltacommit.requested") == (
        "requested",
        "deltacommit",
        "20261128193402051",
        None,
    )
    assert parse_instant("20261128193402051.deltacommit.inflight") == (
        "inflight",
        "deltacommit",
        "20261128193402051",
        None,
    )
    assert parse_instant("20261128193402051_20261128193434963.deltacommit") == (
        "completed",
        "deltacommit",
        "20261128193402051",
        "20261128193434963",
    )
    compaction = parse_instant("20261128193402051.compaction.requested")
    assert compaction is not None and compaction[:2] == ("requested", "compaction")
    # Table version 6 and earlier: a COMMIT's inflight, and completed without completion time.
    assert parse_instant("20261128193402051.inflight") == (
        "inflight",
        "commit",
        "20261128193402051",
        None,
    )
    assert parse_instant("20261128193402051.commit") == (
        "completed",
        "commit",
        "20261128193402051",
        None,
    )
    for other in ("history", "hoodie.properties", ".20261128193402051.deltacommit.crc", "x.tmp"):
        assert parse_instant(other) is None


def test_an_ordered_timeline_has_no_violation() -> None:
    entries = sequence(
        ["001.deltacommit.requested"],
        ["001.deltacommit.inflight"],
        ["001_002.deltacommit"],
        ["003.compaction.requested", "004.deltacommit.requested"],  # one poll: unordered
        ["004.deltacommit.inflight", "003.compaction.inflight"],
        ["004_005.deltacommit"],
        ["003_006.commit"],
    )
    assert judge(entries) == []


def test_a_requested_time_earlier_than_a_completion_seen_before_is_flagged() -> None:
    # A writer whose clock stepped back: instant 005 appears after 004 completed at 006.
    entries = sequence(
        ["001.deltacommit.requested"],
        ["001_004.deltacommit"],
        ["003.deltacommit.requested"],
        ["003.deltacommit.inflight"],
        ["003_005.deltacommit"],
    )
    violations = judge(entries)
    assert [(v.name, v.kind, v.time, v.max_before) for v in violations] == [
        ("003.deltacommit.requested", "requested", "003", "004"),
    ]
    assert violations[0].index == 2
    assert violations[0].max_before_name == "001_004.deltacommit"


def test_a_completion_time_not_after_a_later_requested_time_is_flagged() -> None:
    entries = sequence(
        ["010.deltacommit.requested"],
        ["012.compaction.requested"],
        ["010_011.deltacommit"],  # completed at 011 after 012 was handed out
    )
    assert [(v.kind, v.time, v.max_before) for v in judge(entries)] == [
        ("completion", "011", "012")
    ]
    equal = sequence(["010.deltacommit.requested"], ["010_010.deltacommit"])
    assert [v.kind for v in judge(equal)] == ["completion"]  # strictly greater, not equal


def test_times_of_different_lengths_compare_as_instants() -> None:
    entries = sequence(
        ["20261128193402051.deltacommit.requested"], ["20261128193402051010.x.requested"]
    )
    assert judge(entries) == []


def test_the_watch_records_files_in_order_of_appearance(tmp_path: Path) -> None:
    timeline = tmp_path / ".hoodie" / "timeline"
    calls: list[list[str]] = []
    watch = TimelineWatch(
        tmp_path, interval_s=0.005, on_new=lambda new: calls.append([e.name for e in new])
    )
    watch.start()  # before the table exists: the watch waits for it
    time.sleep(0.05)
    timeline.mkdir(parents=True)
    for name in ("001.deltacommit.requested", "001.deltacommit.inflight", "001_002.deltacommit"):
        (timeline / f".{name}.tmp").write_text("{}")  # hidden temporaries are not instants
        (timeline / f".{name}.tmp").rename(timeline / name)
        time.sleep(0.05)
    (timeline / "history").mkdir()
    entries = watch.stop()
    assert watch.error is None
    assert [e.name for e in entries] == [
        "001.deltacommit.requested",
        "001.deltacommit.inflight",
        "001_002.deltacommit",
    ]
    assert [e.state for e in entries] == ["requested", "inflight", "completed"]
    assert entries[0].seen_s < entries[1].seen_s < entries[2].seen_s
    assert [name for call in calls for name in call] == [e.name for e in entries]
    assert judge(entries) == []
