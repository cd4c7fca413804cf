"""Exactly once for upserts: the newest event of every key, nothing lost, stale or invented."""

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.checks import exactly_once_upserts

KEYS = 7


def key_of(offsets: np.ndarray) -> np.ndarray:
    return (offsets * 5 + 3) % KEYS


def batch(batch_id: int, start: int, end: int, certain: bool = True) -> dict:
    return {"batch_id": batch_id, "start_offset": start, "end_offset": end, "certain": certain}


def table_after(end: int, start: int = 0) -> tuple[list[int], list[int]]:
    """The (keys, event ids) a correct engine shows after applying offsets [start, end)."""
    newest: dict[int, int] = {}
    for offset in range(start, end):
        newest[int(key_of(np.array([offset]))[0])] = offset
    return list(newest), list(newest.values())


def check(batches: list[dict], keys: list[int], events: list[int]):
    return exactly_once_upserts(batches, keys, events, key_of)


def test_the_newest_event_per_key_is_valid() -> None:
    batches = [batch(0, 0, 10), batch(1, 10, 25)]
    result = check(batches, *table_after(25))
    assert result.verdict == "valid", result.evidence
    assert result.evidence["distinct_keys"] == KEYS


def test_a_lost_update_is_stale() -> None:
    keys, events = table_after(25)
    # Key of offset 24 shows the older event of that key from the first batch instead.
    older = max(o for o in range(10) if key_of(np.array([o]))[0] == key_of(np.array([24]))[0])
    events[keys.index(int(key_of(np.array([24]))[0]))] = older
    result = check([batch(0, 0, 10), batch(1, 10, 25)], keys, events)
    assert result.verdict == "invalid"
    assert result.evidence["stale"]["count"] == 1
    assert result.evidence["stale"]["rows"][0]["newest_event_id"] == 24


def test_a_lost_key_a_phantom_and_a_duplicate_are_invalid() -> None:
    keys, events = table_after(10)
    lost_key = keys.pop()
    events.pop()
    result = check([batch(0, 0, 10)], keys, events)
    assert result.verdict == "invalid" and result.evidence["lost"]["keys"] == [lost_key]

    keys, events = table_after(10)
    events[0] = 999  # an event the source never produced for that key
    result = check([batch(0, 0, 10)], keys, events)
    assert result.evidence["phantom"]["count"] == 1

    keys, events = table_after(10)
    result = check([batch(0, 0, 10)], [*keys, keys[0]], [*events, events[0]])
    assert result.verdict == "invalid" and result.evidence["duplicated"]["count"] == 1


def test_uncertain_batches_are_all_or_nothing_in_commit_order() -> None:
    batches = [batch(0, 0, 10), batch(1, 10, 20, certain=False), batch(2, 20, 30, False)]
    for end, visible in ((10, 0), (20, 1), (30, 2)):
        result = check(batches, *table_after(end))
        assert result.verdict == "valid", (end, result.evidence)
        assert result.evidence["batches"]["uncertain_visible"] == visible
    # Half of an uncertain batch matches no prefix.
    assert check(batches, *table_after(15)).verdict == "invalid"


def test_nothing_recorded_is_unknown() -> None:
    assert check([], [], []).verdict == "unknown"


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 12), min_size=1, max_size=6),
    lose=st.integers(0, 70),
)
def test_losing_any_visible_row_is_caught(sizes: list[int], lose: int) -> None:
    bounds = np.cumsum([0, *sizes])
    batches = [batch(i, int(a), int(b)) for i, (a, b) in enumerate(itertools.pairwise(bounds))]
    keys, events = table_after(int(bounds[-1]))
    assert check(batches, keys, events).verdict == "valid"
    i = lose % len(keys)
    result = check(batches, keys[:i] + keys[i + 1 :], events[:i] + events[i + 1 :])
    assert result.verdict == "invalid" and result.evidence["lost"]["count"] == 1


def test_ten_million_events() -> None:
    n = 10_000_000
    batches = [batch(i, i * n // 10, (i + 1) * n // 10) for i in range(10)]
    keys = np.arange(KEYS, dtype=np.int64)
    offsets = np.arange(n - 50, n, dtype=np.int64)
    newest = {int(k): int(o) for k, o in zip(key_of(offsets), offsets, strict=True)}
    result = check(batches, keys, np.array([newest[int(k)] for k in keys]))
    assert result.verdict == "valid", result.evidence
