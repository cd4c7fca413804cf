"""Checkers on hand-made valid and invalid inputs, and a Counter model for exactly_once."""

from collections import Counter
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.checks import (
    CheckResult,
    bank,
    combine,
    combine_verdicts,
    exactly_once,
    exit_code,
    fingerprint,
    isolation,
    unique_keys,
)


def batches(n: int, size: int = 10, uncertain: tuple[int, ...] = ()) -> list[dict[str, Any]]:
    return [
        {
            "batch_id": i,
            "start_offset": i * size,
            "end_offset": (i + 1) * size,
            "certain": i not in uncertain,
        }
        for i in range(n)
    ]


# --- exactly_once ---------------------------------------------------------------------------


def test_exactly_once_valid_with_uncertain_batches_all_or_nothing() -> None:
    ids = np.arange(0, 40)  # batch 3 (uncertain) fully visible, batch 4 (uncertain) absent
    r = exactly_once(batches(5, uncertain=(3, 4)), pa.chunked_array([ids[:15], ids[15:]]))
    assert r.verdict == "valid"
    assert r.evidence["batches"] == {
        "certain": 3,
        "uncertain": 2,
        "uncertain_visible": 1,
        "uncertain_absent": 1,
        "uncertain_before_certain": 0,
    }


def test_exactly_once_reports_lost_ids_and_their_batch() -> None:
    ids = [i for i in range(30) if i not in (12, 13)]
    r = exactly_once(batches(3), ids)
    assert r.verdict == "invalid"
    assert r.evidence["lost"] == {"count": 2, "batches": [1], "ids": [12, 13]}


def test_exactly_once_reports_duplicates_and_phantoms() -> None:
    ids = [*range(20), 5, 5, 7, 999]
    r = exactly_once(batches(2), np.array(ids))
    assert r.verdict == "invalid"
    assert r.evidence["duplicated"] == {
        "count": 2,
        "extra_rows": 3,
        "ids": [{"id": 5, "count": 3}, {"id": 7, "count": 2}],
    }
    assert r.evidence["phantom"] == {"count": 1, "ids": [999]}


def test_a_partly_visible_uncertain_batch_is_invalid() -> None:
    r = exactly_once(batches(2, uncertain=(1,)), list(range(15)))
    assert r.verdict == "invalid"
    assert r.evidence["partial_batches"]["batches"] == [
        {"batch_id": 1, "start_offset": 10, "end_offset": 20, "visible": 5, "expected": 10}
    ]


def test_a_replayed_batch_counts_once_and_is_certain_if_any_record_is() -> None:
    expected = [*batches(2, uncertain=(1,)), {**batches(2)[1], "certain": True}]
    r = exactly_once(expected, list(range(10)))
    assert r.verdict == "invalid" and r.evidence["lost"]["batches"] == [1]


def test_rows_without_an_id_are_invalid() -> None:
    r = exactly_once(batches(1), pa.array([*range(10), None]))
    assert r.verdict == "invalid" and r.evidence["null_ids"] == 1


@pytest.mark.parametrize(
    "expected",
    [
        [],
        [
            {"batch_id": 0, "start_offset": 0, "end_offset": 10, "certain": True},
            {"batch_id": 1, "start_offset": 5, "end_offset": 15, "certain": True},
        ],
        [
            {"batch_id": 0, "start_offset": 0, "end_offset": 10, "certain": True},
            {"batch_id": 0, "start_offset": 0, "end_offset": 12, "certain": True},
        ],
    ],
)
def test_exactly_once_is_unknown_when_the_batches_make_no_sense(expected: list[Any]) -> None:
    r = exactly_once(expected, [1, 2])
    assert r.verdict == "unknown" and r.evidence["reason"]


def test_exactly_once_evidence_is_capped() -> None:
    r = exactly_once(batches(1, size=1000), [])
    assert r.evidence["lost"]["count"] == 1000 and len(r.evidence["lost"]["ids"]) == 20


def test_exactly_once_handles_ten_million_ids() -> None:
    n = 10_000_000
    ids = np.random.default_rng(1).permutation(n)
    ids[17] = ids[18]  # one lost and one duplicated
    r = exactly_once(batches(100, size=n // 100), pa.array(ids))
    assert r.verdict == "invalid"
    assert r.evidence["lost"]["count"] == 1 and r.evidence["duplicated"]["count"] == 1


@settings(max_examples=100, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 6), min_size=1, max_size=6),
    certain=st.lists(st.booleans(), min_size=6, max_size=6),
    observed=st.lists(st.integers(-2, 40), max_size=60),
)
def test_exactly_once_agrees_with_a_counter_model(
    sizes: list[int], certain: list[bool], observed: list[int]
) -> None:
    expected, start = [], 0
    for i, size in enumerate(sizes):
        expected.append(
            {
                "batch_id": i,
                "start_offset": start,
                "end_offset": start + size,
                "certain": certain[i],
            }
        )
        start += size
    seen = Counter(observed)
    owner = {o: b for b in expected for o in range(b["start_offset"], b["end_offset"])}
    lost = sum(1 for o, b in owner.items() if b["certain"] and o not in seen)
    partial = [
        b["batch_id"]
        for b in expected
        if not b["certain"]
        and 0
        < sum(o in seen for o in range(b["start_offset"], b["end_offset"]))
        < b["end_offset"] - b["start_offset"]
    ]
    dups = sorted(o for o, c in seen.items() if c > 1)
    phantoms = sorted(o for o in seen if o not in owner)
    # Commit order: after the first uncertain batch not wholly visible, nothing is visible.
    shown = [sum(o in seen for o in range(b["start_offset"], b["end_offset"])) for b in expected]
    gap = next(
        (
            i
            for i, b in enumerate(expected)
            if not b["certain"] and shown[i] < b["end_offset"] - b["start_offset"]
        ),
        len(expected),
    )
    out_of_order = [b["batch_id"] for i, b in enumerate(expected) if i > gap and shown[i]]

    r = exactly_once(expected, np.array(observed, dtype=np.int64))
    ev = r.evidence
    assert ev["lost"]["count"] == lost
    assert [b["batch_id"] for b in ev["partial_batches"]["batches"]] == partial
    assert [d["id"] for d in ev["duplicated"]["ids"]] == dups[:20]
    assert ev["phantom"]["ids"] == phantoms[:20]
    assert [b["batch_id"] for b in ev["out_of_order"]["batches"]] == out_of_order
    # Nothing certain proves nothing unless a violation shows anyway (fail closed).
    unproven = not any(b["certain"] for b in expected)
    bad = lost or partial or dups or phantoms or out_of_order
    want = "invalid" if bad else "unknown" if unproven else "valid"
    assert r.verdict == want


# --- unique_keys ----------------------------------------------------------------------------


def test_unique_keys() -> None:
    assert unique_keys(pa.array([1, 2, 3])).verdict == "valid"
    r = unique_keys(pa.array(["a", "b", "a", "c", "a"]), file_groups=["g1", "g2", "g3", "g1", "g1"])
    assert r.verdict == "invalid"
    assert r.evidence["keys"] == [{"key": "a", "count": 3, "file_groups": ["g1", "g3"]}]
    assert (r.evidence["duplicated_keys"], r.evidence["extra_rows"]) == (1, 2)


def test_a_null_key_is_invalid() -> None:
    assert unique_keys(pa.array([1, None])).verdict == "invalid"


# --- bank -----------------------------------------------------------------------------------


def test_bank_valid_and_invalid_reads() -> None:
    reads = [
        {"read_kind": "snapshot", "total": 8000, "accounts": 8},
        {"read_kind": "as_of", "as_of": "t5", "total": 8000, "accounts": list(range(8))},
        {"read_kind": "incremental", "begin": "t1", "end": "t2", "total": 8000, "accounts": 8},
    ]
    assert bank(reads, 8000, 8).verdict == "valid"
    torn = [
        *reads,
        {"read_kind": "as_of", "as_of": "t9", "total": 7900, "accounts": 8, "reader": "reader:0"},
    ]
    r = bank(torn, 8000, 8)
    assert r.verdict == "invalid"
    assert r.evidence["bad_reads"]["items"] == [
        {"reader": "reader:0", "read_kind": "as_of", "as_of": "t9", "total": 7900, "accounts": 8}
    ]


def test_a_read_missing_an_account_is_invalid() -> None:
    assert bank([{"read_kind": "snapshot", "total": 10, "accounts": 7}], 10, 8).verdict == "invalid"


def test_bank_without_reads_is_unknown() -> None:
    assert bank([], 10, 8).verdict == "unknown"


# --- isolation ------------------------------------------------------------------------------


COMPLETED = {"i1": "t1", "i2": "t2"}  # requested time -> completion time


def read(as_of: str, ids: list[int], **extra: Any) -> dict[str, Any]:
    return {
        "read_kind": "as_of",
        "as_of": as_of,
        "read_at": as_of,
        "rows": len(ids),
        "fingerprint": fingerprint(ids),
        "instants": {"i1": len(ids)} if ids else {},
        **extra,
    }


def test_fingerprint_ignores_order_but_not_multiplicity() -> None:
    assert fingerprint([1, 2, 3]) == fingerprint(pa.array([3, 1, 2]))
    assert fingerprint([1, 2, 3]) != fingerprint([1, 2, 3, 3])
    assert fingerprint([1, 2]) != fingerprint([1, 3])


def test_isolation_valid_when_repeated_reads_agree() -> None:
    during = [read("t1", [1, 2]), read("t2", [1, 2, 3])]
    repeated = [read("t2", [3, 2, 1]), read("t1", [2, 1])]
    assert isolation(during, repeated, COMPLETED).verdict == "valid"


def test_isolation_invalid_when_an_as_of_answer_changes() -> None:
    r = isolation([read("t1", [1, 2], reader="reader:0")], [read("t1", [1, 2, 4])], COMPLETED)
    assert r.verdict == "invalid"
    assert r.evidence["changed"]["items"] == [
        {
            "read": {"read_kind": "as_of", "as_of": "t1", "begin": None, "end": None},
            "reader": "reader:0",
            "rows_then": 2,
            "rows_at_end": 3,
        }
    ]


def test_isolation_invalid_when_uncommitted_rows_are_seen() -> None:
    dirty = read("t1", [1], instants={"i1": 1, "i9": 4})  # i9 never completed
    r = isolation([dirty], [dirty], COMPLETED)
    assert r.verdict == "invalid" and r.evidence["uncommitted_seen"]["count"] == 1


def test_isolation_unknown_when_a_read_was_never_repeated() -> None:
    r = isolation([read("t1", [1]), read("t2", [1])], [read("t1", [1])], COMPLETED)
    assert r.verdict == "unknown" and r.evidence["not_repeated"]["count"] == 1
    assert isolation([], [], COMPLETED).verdict == "unknown"


# --- verdicts -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("verdicts", "overall", "code"),
    [
        (["valid", "valid"], "valid", 0),
        (["valid", "unknown"], "unknown", 2),
        (["unknown", "invalid", "valid"], "invalid", 1),
        ([], "unknown", 2),
    ],
)
def test_combine_and_exit_code(verdicts: list[str], overall: str, code: int) -> None:
    results = [CheckResult(f"c{i}", v) for i, v in enumerate(verdicts)]  # type: ignore[arg-type]
    assert combine(results) == overall
    assert exit_code(combine(results)) == code


def test_no_checks_is_valid_only_when_allowed() -> None:
    assert combine([], allow_empty=True) == "valid"


def test_combine_verdicts_takes_plain_strings() -> None:
    assert combine_verdicts(iter(["valid", "invalid"])) == "invalid"
    assert combine_verdicts([]) == "unknown"


def test_an_unexpected_verdict_fails_closed() -> None:
    assert combine([CheckResult("x", "maybe")]) == "unknown"  # type: ignore[arg-type]
    assert exit_code("maybe") == 2


def test_to_dict_is_the_result_json_entry() -> None:
    assert CheckResult("x", "valid", {"n": 1}).to_dict() == {"verdict": "valid", "n": 1}
