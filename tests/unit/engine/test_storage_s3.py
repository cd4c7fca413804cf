"""engine/storage/ on both backends: a local folder and an S3-compatible store (moto's
server, a real process; no mock of the client). Conditional create and compare-and-swap
semantics, a write whose response was lost (retried idempotently), and the engine's
table created, committed and read on S3."""

from __future__ import annotations

import threading

import pytest

from engine.config import TableConfig
from engine.errors import CorruptFileError
from engine.storage import ResponseLostError, Storage
from engine.table import Table
from tests.unit.engine.engine_helpers import as_dict, rows


def _lose_first(op: str):
    """A hook that loses the response of the first `op` (the write lands, the client errs)."""
    state = {"left": 1}

    def hook(seen: str, _path: str) -> None:
        if seen == op and state["left"]:
            state["left"] -= 1
            raise ResponseLostError(f"lost response: {seen}")

    return hook


def test_put_if_absent_creates_once(storage_root):
    s = Storage(storage_root)
    s.put_if_absent("a/x", b"1")
    with pytest.raises(FileExistsError):
        s.put_if_absent("a/x", b"2")
    assert s.read_bytes("a/x") == b"1"
    assert s.list("a") == ["x"]


def test_compare_and_swap_succeeds_only_on_the_version_read(storage_root):
    s = Storage(storage_root)
    with pytest.raises(FileNotFoundError):
        s.read_versioned("r")
    v1 = s.put_if_version("r", b"v1", None)  # None: only if absent
    assert v1 is not None
    assert s.put_if_version("r", b"other", None) is None
    assert s.read_versioned("r") == (b"v1", v1)  # the new version, as a read gives it
    v2 = s.put_if_version("r", b"v2", v1)  # the returned version serves the next CAS
    assert v2 is not None and v2 != v1
    assert s.put_if_version("r", b"v3", v1) is None  # stale version: someone wrote v2
    assert s.read_versioned("r") == (b"v2", v2)
    assert s.put_if_version("missing", b"x", v2) is None  # a version of nothing never matches


def test_a_create_whose_response_was_lost_is_retried_and_is_no_conflict(storage_root):
    s = Storage(storage_root)
    s.hooks.append(_lose_first("put"))
    s.put_if_absent("lease/00001", b"mine")  # landed, response lost, retry finds it: ours
    assert s.read_bytes("lease/00001") == b"mine"
    assert s.list("lease") == ["00001"]


def test_a_retried_create_that_finds_anothers_object_is_a_conflict(storage_root):
    s, other = Storage(storage_root), Storage(storage_root)
    other.put_if_absent("k", b"same bytes")
    s.hooks.append(_lose_first("put"))
    with pytest.raises(FileExistsError):
        s.put_if_absent("k", b"same bytes")


def test_a_cas_whose_response_was_lost_is_retried_and_succeeds(storage_root):
    s = Storage(storage_root)
    s.put_if_version("r", b"v1", None)
    _, v1 = s.read_versioned("r")
    s.hooks.append(_lose_first("put"))
    v2 = s.put_if_version("r", b"v2", v1)  # the retry's If-Match fails on its own write
    assert v2 is not None and s.read_versioned("r") == (b"v2", v2)


def test_a_plain_write_whose_response_was_lost_lands_once(storage_root):
    s = Storage(storage_root)
    s.hooks.append(_lose_first("put"))
    s.write_bytes("d/f", b"data")
    assert s.read_bytes("d/f") == b"data"
    assert s.list("d") == ["f"]


def test_s3_writes_leave_no_temporary_objects(s3_location):
    """On S3 a write is one PUT: no temp object, no rename (copy + delete)."""
    s = Storage(s3_location())
    ops: list[str] = []
    s.hooks.append(lambda op, _p: ops.append(op))
    s.write_bytes("d/a", b"1")
    s.put_if_absent("d/b", b"2")
    assert ops == ["put", "put"]
    assert s.list("d") == ["a", "b"]
    assert s.kind == "s3"


def test_a_table_is_created_committed_and_read_on_s3(s3_location):
    location = s3_location()
    table = Table.create(location, TableConfig(file_groups=2), rows([0]).schema, max_skew_ms=0)
    instant = table.start_instant()
    table.commit(instant, table.write_files(instant, rows([1, 2, 3]), op="upsert"))
    table.close()
    reopened = Table.open(location, max_skew_ms=0)
    try:
        assert as_dict(reopened.snapshot()) == {1: 10, 2: 20, 3: 30}
        assert reopened.storage.kind == "s3"
    finally:
        reopened.close()


def test_a_torn_write_is_caught_on_both_backends(storage_root):
    """A fault truncates the file right after it landed (raw_write, no hooks): the
    verifying write reads its size back and fails instead of reporting a broken file."""
    s = Storage(storage_root)

    def tear(full: str) -> None:
        s.raw_write(full, s.raw_read(full)[:10])

    s.after_write_hooks.append(tear)
    with pytest.raises(CorruptFileError):
        s.write_parquet("f.parquet", rows([1, 2, 3]))


class _PausedPublish:
    """Stops a holder's staged write between its decision (the grant's compare-and-swap)
    and its publication, until released (a SIGSTOP ... SIGCONT, forced, not waited for)."""

    def __init__(self, storage: Storage) -> None:
        self.reached, self.go = threading.Event(), threading.Event()
        folders = storage.backend.folders
        real = folders._publish

        def paused(pending, *, sealing):
            if not sealing:
                self.reached.set()
                assert self.go.wait(10)
            return real(pending, sealing=sealing)

        folders._publish = paused


def _staged_in_thread(storage: Storage, path: str, data: bytes) -> tuple[threading.Thread, list]:
    errors: list = []

    def run() -> None:
        try:
            storage.put_staged("fence/g", path, data)
        except OSError as e:
            errors.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, errors


@pytest.mark.parametrize("removed_meanwhile", [False, True])
def test_a_holder_resumed_after_the_seal_lands_nothing_new(s3_location, removed_meanwhile):
    """S3 fencing (s3_folders.Folders): a write decided before the seal is published by the
    sealer; its holder, resumed afterwards, fails, and if the object was removed since (a
    rollback) its late PUT does not bring it back."""
    location = s3_location()
    holder, sealer = Storage(location), Storage(location)
    holder.makedirs("fence")
    holder.create_dir("fence/g")
    pause = _PausedPublish(holder)
    thread, errors = _staged_in_thread(holder, "tl/x", b"decided")
    assert pause.reached.wait(10)
    assert sealer.remove_dir("fence/g")  # seals: finishes the decided write first
    assert sealer.read_bytes("tl/x") == b"decided"
    if removed_meanwhile:
        sealer.delete("tl/x")
    pause.go.set()
    thread.join(10)
    assert [type(e) for e in errors] == [FileNotFoundError]  # the holder learns it was sealed
    assert sealer.exists("tl/x") == (not removed_meanwhile)
    with pytest.raises(FileNotFoundError):  # and nothing it stages lands any more
        holder.put_staged("fence/g", "tl/y", b"late")
    assert not sealer.exists("tl/y")
