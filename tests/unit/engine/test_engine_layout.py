"""File names, file slices (both slicing rules) and the indexes."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pytest

from engine.layout.file_names import (
    base_file_name,
    log_file_name,
    new_write_token,
    parse_data_file,
    write_token,
)
from engine.layout.file_slices import build_view
from engine.layout.index import DynamicIndex, bucket_of_keys, stable_hash

T = "20240101000000%03d"


def test_data_file_names_round_trip():
    b = parse_data_file(base_file_name("fg-0001", "0-1-3", T % 5))
    assert (b.kind, b.file_id, b.write_token, b.instant) == ("base", "fg-0001", "0-1-3", T % 5)
    log = parse_data_file(log_file_name("fg-0001", T % 6, 2, write_token(3, 1, 2)))
    assert (log.kind, log.file_id, log.instant, log.version, log.write_token) == (
        "log",
        "fg-0001",
        T % 6,
        2,
        "3-1-2",
    )
    assert log.name == f".fg-0001_{T % 6}.log.2_3-1-2"
    for other in (".tmp-abc-" + b.name, "x.parquet", ".hoodie", "fg_1_2.parquet"):
        assert parse_data_file(other) is None


def test_write_tokens_are_hudi_s_three_numbers():
    # FSUtils.isLogFile takes `<task partition>-<stage>-<attempt>` only, each a Java int.
    for bad in ("bad_token", "t0-a0-f0", "0-0", "0-0-0-0", f"0-0-{2**31}"):
        with pytest.raises(ValueError, match="write token"):
            base_file_name("fg-0001", bad, T % 1)
        with pytest.raises(ValueError, match="write token"):
            log_file_name("fg-0001", T % 1, 1, bad)
    with pytest.raises(ValueError, match="write token parts"):
        write_token(0, -1, 0)
    assert parse_data_file(f".fg-0001_{T % 1}.log.1_t0-a0-f0") is None  # an old engine's
    token = new_write_token(stage=4)
    assert token.startswith("0-4-") and parse_data_file(base_file_name("g", token, T % 1))
    assert len({new_write_token() for _ in range(50)}) == 50


def _files(*specs):
    """(kind, file id, instant ms, completion ms[, version])."""
    out = []
    for kind, fid, inst, done, *ver in specs:
        name = (
            base_file_name(fid, "0-0-0", T % inst)
            if kind == "base"
            else log_file_name(fid, T % inst, ver[0] if ver else 1, "0-0-0")
        )
        out.append((parse_data_file(name), T % done))
    return out


def test_completion_time_slicing_attaches_late_log_to_new_slice():
    files = _files(("log", "g", 1, 2), ("log", "g", 3, 9))  # log 3 inflight when 5 was scheduled
    for slicing, expected in ((True, [T % 3]), (False, [])):
        view = build_view(files + _files(("base", "g", 5, 8)), {}, slicing)
        base, logs = view.latest("g")
        assert base.instant == T % 5
        assert [f.instant for f in logs] == expected


def test_pending_compaction_merges_both_slices():
    files = _files(("log", "g", 1, 2), ("log", "g", 3, 9))
    base, logs = build_view(files, {T % 5: ["g"]}).latest("g")
    assert base is None and [f.instant for f in logs] == [T % 1, T % 3]
    group = build_view(files, {T % 5: ["g"]}).groups["g"]
    assert [s.start for s in group.slices] == ["", T % 5]
    assert [len(s.logs) for s in group.slices] == [1, 1]


def test_logs_merge_in_requested_time_order_whatever_order_they_completed_in():
    # Apache Hudi's order (HoodieLogFile.getLogFileComparator): requested time, version.
    files = _files(("log", "g", 2, 4), ("log", "g", 1, 9), ("log", "g", 2, 4, 2))
    _, logs = build_view(files).latest("g")
    assert [(f.instant, f.version) for f in logs] == [(T % 1, 1), (T % 2, 1), (T % 2, 2)]


def test_latest_base_by_requested_time():
    view = build_view(_files(("base", "g", 1, 9), ("base", "g", 2, 3)))
    assert view.latest("g")[0].instant == T % 2
    assert view.latest("missing") == (None, [])


def test_stable_hash_is_the_same_in_another_process():
    keys = ["a", "key-1", "", "ünïcode"]
    here = stable_hash(pa.array(keys)).tolist() + stable_hash(pa.array([1, -5, 2**40])).tolist()
    code = (
        "import pyarrow as pa;from engine.layout.index import stable_hash;"
        f"print(stable_hash(pa.array({keys!r})).tolist() + "
        "stable_hash(pa.array([1, -5, 2**40])).tolist())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == str(here)


def test_hash_handles_slices_chunks_and_types():
    arr = pa.array(["x", "y", "z", "w"])
    assert (stable_hash(arr.slice(1)) == stable_hash(pa.array(["y", "z", "w"]))).all()
    assert (stable_hash(pa.chunked_array([["x"], ["y"]])) == stable_hash(arr.slice(0, 2))).all()
    assert (stable_hash(pa.array(["x"], pa.large_string())) == stable_hash(arr.slice(0, 1))).all()
    assert (stable_hash(pa.array([7], pa.int32())) == stable_hash(pa.array([7], pa.int64()))).all()


def test_buckets_are_balanced():
    counts = np.bincount(bucket_of_keys(pa.array(np.arange(80_000)), 8), minlength=8)
    assert counts.min() > 9_000
    counts = np.bincount(bucket_of_keys(pa.array([f"k{i}" for i in range(80_000)]), 8), minlength=8)
    assert counts.min() > 9_000


def test_dynamic_index_lookup_and_smallest_group():
    index = DynamicIndex({"g1": pa.array([1, 2, 3]), "g2": pa.array([4])}, ["g1", "g2", "g3"])
    assert index.lookup(pa.array([3, 4, 5])).tolist() == [0, 1, -1]
    assert index.file_ids[index.group_for_new("anyone")] == "g3"
    route = index.route(pa.array([1, 99]), "w")
    assert route.new.tolist() == [False, True] and route.codes.tolist() == [0, 2]
    tie = DynamicIndex({}, [f"g{i}" for i in range(8)])
    picks = {tie.group_for_new(f"writer-{i}") for i in range(20)}
    assert len(picks) > 1  # different writers prefer different groups on ties
