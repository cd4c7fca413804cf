"""storage_error with mode lost_response: the put lands, its response is lost, the storage
retries it, and the retry is idempotent: a conditional create that finds its own object is
no conflict. On both backends (a local folder; moto's S3 server)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fault_occurrence import occurrence

from engine.storage import ResponseLostError, Storage
from harness.faults import storage as storage_faults
from harness.faults.fired import FiredLog
from harness.history import HistoryWriter, read_events
from harness.run_clock import RunClock
from harness.scenario import ScenarioError, load_scenario


def _lossy(tmp_path: Path, root: str, count: int = 1) -> Storage:
    lost = occurrence(
        "storage_error", 0, 10, 10, None, {"op": "put", "count": count, "mode": "lost_response"}
    )
    faults = storage_faults.StorageFaults(
        [lost],
        RunClock(t0=time.time() - 20),
        HistoryWriter(tmp_path / "history", "driver"),
        FiredLog(tmp_path / "fired"),
    )
    return faults.install(Storage(root))


def _faults(tmp_path: Path) -> list[dict]:
    return [e for e in read_events(tmp_path / "history") if e["kind"] == "fault"]


def test_a_create_whose_response_was_lost_is_retried_without_a_conflict(tmp_path, storage_root):
    storage = _lossy(tmp_path, storage_root)
    storage.put_if_absent("lock/00000000000000000001", b"held by me")
    assert storage.read_bytes("lock/00000000000000000001") == b"held by me"
    [fault] = _faults(tmp_path)
    assert fault["evidence"]["mode"] == "lost_response" and fault["evidence"]["op"] == "put"
    with pytest.raises(FileExistsError):  # the count is used up: a real second create
        storage.put_if_absent("lock/00000000000000000001", b"held by me")


def test_a_fenced_write_whose_response_was_lost_is_retried_idempotently(tmp_path, storage_root):
    """A staged timeline write with a claim (a completion) lands, its response is lost; the
    retry finds its claim and file written by itself: no InstantClaimedError, one file."""
    setup = Storage(storage_root)
    for folder in ("grant", "timeline", "claims"):
        setup.makedirs(folder)
    setup.create_dir("grant/token")
    storage = _lossy(tmp_path, storage_root)
    storage.put_staged("grant/token", "timeline/1.commit", b"meta", claim="claims/1")
    assert storage.read_bytes("timeline/1.commit") == storage.read_bytes("claims/1") == b"meta"
    assert [f["evidence"]["mode"] for f in _faults(tmp_path)] == ["lost_response"]


def test_a_grant_whose_creation_response_was_lost_landed_and_says_so(tmp_path, storage_root):
    """A put the storage does not retry (a folder: it could not tell its own) lands, then
    the caller gets the error, as from a store that timed out after applying it."""
    storage = _lossy(tmp_path, storage_root)
    storage.makedirs("grant")
    with pytest.raises(ResponseLostError):
        storage.create_dir("grant/token")
    with pytest.raises(FileExistsError):
        storage.create_dir("grant/token")


def test_lost_response_is_for_puts_only(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(
        "name: t\nfaults:\n  - {kind: storage_error, at_s: 1, op: delete, mode: lost_response}\n"
    )
    with pytest.raises(ScenarioError) as info:
        load_scenario(path, [])
    assert "mode lost_response: allowed op: put" in str(info.value)
