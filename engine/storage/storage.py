"""File system access for one table root, with fault hooks; the backend (a local folder,
or an object store: engine/storage/backend.py states what each must keep) does the rest.

The root is a local folder or an object-store location `s3://BUCKET/PREFIX[?endpoint=URL]`;
`backend_for` picks the backend, the one place that tells them apart.

Paths are relative to the root, '/'-separated. Every operation first calls each
`hooks` entry with (op, full_path), op in put | rename | delete | read | list, so the
harness can add latency or raise; every write then calls each `after_write_hooks`
entry with the full path (to tear a file). A hook that raises ResponseLostError lets a
write happen and then loses its response (a timeout after the store applied it): the
storage retries the write, as an SDK does, and the retry must be idempotent.
"""

from __future__ import annotations

import builtins
import errno
import os
import uuid
from collections.abc import Callable, Iterable

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from engine.errors import CorruptFileError
from engine.storage.backend import Backend, Encoder, PendingFile, ResponseLostError
from engine.storage.local import LocalBackend
from engine.storage.s3 import S3Backend
from engine.storage.s3_objects import is_s3

Hook = Callable[[str, str], None]
AfterWriteHook = Callable[[str], None]


def backend_for(root: str, filesystem: pafs.FileSystem | None = None) -> Backend:
    """The backend of a table root: S3 for `s3://...`, else a local folder."""
    return S3Backend(root, filesystem) if is_s3(root) else LocalBackend(root, filesystem)


def new_write_id() -> str:
    """Tags one conditional write, retries included (a retry then finds its own)."""
    return uuid.uuid4().hex


class OpenWrite:
    """Storage.open_write's file: `stream` takes the bytes, `close` publishes them (one
    "put" for the hooks, as a PUT of the whole file; a lost response needs no retry: the
    rename or PUT landed), `abort` drops them."""

    def __init__(self, storage: Storage, path: str, staging: str | None) -> None:
        self.storage, self.path = storage, path
        self.full = storage.full_path(path)
        staging_full = storage.full_path(staging) if staging is not None else None
        self._pending: PendingFile = storage.backend.open_pending(self.full, staging_full)
        self.stream: pa.NativeFile = self._pending.stream

    def close(self) -> int:
        """Publish the file; returns its size. FileNotFoundError if `staging` was sealed
        meanwhile; CorruptFileError (with verify_writes) if it did not land whole."""
        size = self.stream.tell()
        self.storage._hook("put", self.full)
        self._pending.publish()
        self.storage._after_write(self.full)
        self.storage._verify_size(self.path, size)
        return size

    def abort(self) -> None:
        """Drop the unfinished file (a sealed directory took it already)."""
        self._pending.abort()


class Storage:
    def __init__(self, root: str, filesystem: pafs.FileSystem | None = None) -> None:
        self.backend: Backend = backend_for(root, filesystem)
        self.root = self.backend.root
        self.hooks: list[Hook] = []
        self.verify_writes = True  # set from Safety.verify_writes by the table
        self.after_write_hooks: list[AfterWriteHook] = []

    @property
    def kind(self) -> str:
        """local | s3 (what result.json records as environment.storage.kind)."""
        return self.backend.kind

    @property
    def filesystem(self) -> pafs.FileSystem:
        """The backend's pyarrow file system (streams, file info, deletes and moves)."""
        return self.backend.filesystem

    @filesystem.setter
    def filesystem(self, filesystem: pafs.FileSystem) -> None:
        self.backend.filesystem = filesystem

    def full_path(self, path: str) -> str:
        return f"{self.root}/{path}" if path else self.root

    def _hook(self, op: str, full: str) -> bool:
        """Run the hooks; True if one asked for the write's response to be lost."""
        lost = False
        for hook in self.hooks:
            try:
                hook(op, full)
            except ResponseLostError:
                lost = True
        return lost

    def raw_read(self, full: str) -> bytes:
        """The bytes at a full path, without hooks (for fault injection)."""
        with self.filesystem.open_input_stream(full) as f:
            return f.read()

    def raw_write(self, full: str, data: bytes) -> None:
        """Overwrite a full path in place, without hooks (fault injection: a torn file)."""
        self.backend.raw_write(full, data)

    def _after_write(self, full: str) -> None:
        for hook in self.after_write_hooks:
            hook(full)

    # -- bytes -------------------------------------------------------------------------

    def read_bytes(self, path: str) -> bytes:
        full = self.full_path(path)
        self._hook("read", full)
        with self.filesystem.open_input_stream(full) as f:
            return f.read()

    def write_bytes(self, path: str, data: bytes | pa.Buffer | Encoder) -> int:
        """Atomic replace: locally a temp file renamed over the target; on S3 one PUT.
        Returns the bytes written. `data` may be an Encoder, which then writes the bytes
        into the temp file itself (a Parquet file streams its pages to storage instead of
        being built in memory first; on S3 into one buffer for the PUT)."""
        full = self.full_path(path)
        size = 0
        for _ in range(2 if self._hook("put", full) else 1):  # a lost response: PUT again
            size = self.backend.put(full, data)
        self._after_write(full)
        return size

    def put_if_absent(self, path: str, data: bytes, parents: bool = True) -> None:
        """Create `path` atomically; FileExistsError if it exists (never overwrites).

        parents=False never creates the directory: FileNotFoundError once it is removed
        (how a sealed fence directory refuses a staged write, engine/table/fencing.py).
        A retry after a lost response that finds this call's own object is no conflict."""
        full = self.full_path(path)
        write_id = new_write_id()
        for attempt in range(2 if self._hook("put", full) else 1):
            try:
                self.backend.create(full, data, parents, write_id)
            except FileExistsError:
                if not (attempt and self.backend.written_by(full, write_id, data)):
                    raise
        self._after_write(full)

    # -- versioned reads and compare-and-swap (a lock record, a register) ---------------

    def read_versioned(self, path: str) -> tuple[bytes, str]:
        """The bytes at `path` and their version (an opaque string: S3's ETag; locally the
        MD5 of the bytes, which is what S3's ETag of a plain PUT is too); FileNotFoundError
        if absent. Like an ETag, a version names the bytes: writing the same bytes again
        gives the same version."""
        full = self.full_path(path)
        self._hook("read", full)
        return self.backend.read_versioned(full)

    def put_if_version(self, path: str, data: bytes, version: str | None) -> str | None:
        """Write `data` to `path` only if its current version is `version` (None: only if
        `path` is absent); returns the new version (as read_versioned would: a CAS needs no
        read-back), None if not. A retry after a lost response that finds this call's own
        write counts as success (the version is the first attempt's: the object found is
        that write)."""
        full = self.full_path(path)
        lost = self._hook("put", full)
        write_id = new_write_id()
        new: str | None = None
        for attempt in range(2 if lost else 1):
            landed = self.backend.put_if_version(full, data, version, write_id)
            if landed is not None:
                new = landed
            elif not (attempt and self.backend.written_by(full, write_id, data)):
                return None
        if new is not None:
            self._after_write(full)
        return new

    def put_staged(
        self,
        staging: str,
        path: str,
        data: bytes,
        *,
        claim: str | None = None,
        replace: bool = False,
    ) -> None:
        """Write `data` to a temp file inside the directory `staging` (never created here),
        link it to `claim` (if given), then to `path`, each only if absent (`replace`:
        `path` is replaced), and drop the temp: one storage operation, like put_if_absent.

        FileNotFoundError if `staging` is gone or the temp was taken out of it meanwhile (a
        sealed fence grant: engine/table/fencing.py); FileExistsError, with `filename` the
        full path, if `claim` or `path` exists. S3: s3_folders.Folders.put_staged.
        A retry after a lost response that finds its claim and path written by this call
        (S3: its write id; local: its bytes) is no conflict."""
        full = self.full_path(path)
        staging_full = self.full_path(staging)
        claim_full = self.full_path(claim) if claim is not None else None
        write_id = new_write_id()
        for attempt in range(2 if self._hook("put", full) else 1):
            try:
                self.backend.put_staged(staging_full, full, data, claim_full, replace, write_id)
            except FileExistsError:
                landed = [t for t in (claim_full, full) if t is not None]
                if not (
                    attempt and all(self.backend.written_by(t, write_id, data) for t in landed)
                ):
                    raise
        self._after_write(full)

    @staticmethod
    def _lose(lost: bool, full: str) -> None:
        """A write without a retry here whose response a hook lost: it landed, the caller
        gets the error (as from a store that timed out after applying it)."""
        if lost:
            raise ResponseLostError(errno.ETIMEDOUT, "response lost after the write landed", full)

    def link(self, src: str, dst: str) -> None:
        """Make `dst` hold the bytes of `src`, only if `dst` is absent: FileExistsError if it
        exists, FileNotFoundError if `src` is gone. Local storage: a hard link, atomic."""
        full_dst = self.full_path(dst)
        lost = self._hook("put", full_dst)
        self.backend.link(self.full_path(src), full_dst)
        self._lose(lost, full_dst)

    def create_dir(self, path: str) -> None:
        """Create one directory, never its parents: FileExistsError if it exists,
        FileNotFoundError if the parent does not (a removed parent stays removed)."""
        full = self.full_path(path)
        lost = self._hook("put", full)
        self.backend.create_dir(full)
        self._lose(lost, full)

    def remove_dir(self, path: str) -> bool:
        """Remove an empty directory: True once it is gone, False if it is not empty.

        Local storage: rmdir(2), after which nothing can be created in it any more, even by
        a process that resolved the path before (the kernel marks the directory dead).
        S3: a folder made by create_dir/makedirs is sealed in place, with the folders in it
        (s3_folders.Folders.seal); True."""
        full = self.full_path(path)
        self._hook("delete", full)
        return self.backend.remove_dir(full, lambda: self.list(path))

    # -- metadata operations -----------------------------------------------------------

    def rename(self, src: str, dst: str) -> None:
        full_src = self.full_path(src)
        self._hook("rename", full_src)
        if self._info(full_src).type == pafs.FileType.NotFound:
            raise FileNotFoundError(full_src)

        def files() -> builtins.list[str]:  # a folder's, through the hooks (S3 moves each)
            return [self.full_path(rel) for rel in self.walk(src)]

        self.backend.rename(full_src, self.full_path(dst), files)

    def delete(self, path: str, missing_ok: bool = False) -> None:
        full = self.full_path(path)
        self._hook("delete", full)
        try:
            self.filesystem.delete_file(full)
        except FileNotFoundError:
            if not missing_ok:
                raise

    def delete_staged(self, staging: str, path: str) -> None:
        """Delete `path` only while the directory `staging` (a fence grant) is open, decided
        atomically with that check: locally `path` is moved into `staging` (a rename into a
        removed directory fails), then deleted; S3: s3_folders.Folders.delete_staged.
        FileNotFoundError, with `filename` staging's full path, once it is sealed; a
        missing `path` is no error."""
        full = self.full_path(path)
        self._hook("delete", full)
        self.backend.delete_staged(self.full_path(staging), full, new_write_id())

    def exists(self, path: str) -> bool:
        full = self.full_path(path)
        self._hook("read", full)
        return self._info(full).type != pafs.FileType.NotFound

    def sizes(self, paths: Iterable[str]) -> dict[str, int | None]:
        """Size of each file (None if missing), in one batched call."""
        paths = list(paths)
        fulls = [self.full_path(p) for p in paths]
        for full in fulls:
            self._hook("read", full)
        infos = self.filesystem.get_file_info(fulls)
        return {
            p: (None if i.type == pafs.FileType.NotFound else i.size)
            for p, i in zip(paths, infos, strict=True)
        }

    def list(self, directory: str = "") -> list[str]:
        """Names (not paths) of the entries of `directory`; [] if it does not exist (what
        a listing may miss: engine/storage/backend.py)."""
        full = self.full_path(directory)
        self._hook("list", full)
        return self.backend.list(full)

    def walk(self, directory: str = "") -> builtins.list[str]:
        """Paths (relative to the root) of every file under `directory`, sorted."""
        full = self.full_path(directory)
        self._hook("list", full)
        selector = pafs.FileSelector(full, recursive=True, allow_not_found=True)
        infos = self.filesystem.get_file_info(selector)
        start = len(self.root) + 1
        return sorted(i.path[start:] for i in infos if i.type == pafs.FileType.File)

    def copy_to_local(self, target: str) -> None:
        """Copy the whole table into the local folder `target` (an object store's folder
        markers become folders)."""
        files = self.walk()
        folders = {rel[:i] for rel in files for i, c in enumerate(rel) if c == "/"}
        for rel in files:
            dest = os.path.join(target, rel)
            data = self.read_bytes(rel)
            if rel in folders or self.backend.is_folder_marker(data):
                os.makedirs(dest, exist_ok=True)
                continue
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "wb") as f:
                f.write(data)

    def makedirs(self, directory: str) -> None:
        self.backend.makedirs(self.full_path(directory))

    def _info(self, full: str) -> pafs.FileInfo:
        return self.filesystem.get_file_info(full)

    # -- parquet -----------------------------------------------------------------------

    def write_parquet(self, path: str, table: pa.Table) -> int:
        """Atomically write `table` as Parquet; returns the file size in bytes."""
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink, compression="snappy")
        return self.write_verified(path, sink.getvalue().to_pybytes())

    def write_verified(self, path: str, data: bytes | pa.Buffer | Encoder) -> int:
        """Atomically write a data file (bytes, an Arrow buffer written without a copy
        locally, or an Encoder streaming into the temp file); returns its size in bytes.

        With `verify_writes`, a file that is not whole on storage afterwards (a torn write)
        fails the write here, so the writer retries instead of reporting a broken file."""
        size = self.write_bytes(path, data)
        self._verify_size(path, size)
        return size

    def _verify_size(self, path: str, size: int) -> None:
        """With `verify_writes`: CorruptFileError unless `size` bytes landed at `path`."""
        if self.verify_writes:
            landed = self.sizes([path])[path]
            if landed != size:
                raise CorruptFileError(
                    self.full_path(path), f"torn write: {landed} bytes landed of {size}"
                )

    def open_write(self, path: str, staging: str | None = None) -> OpenWrite:
        """A data file written piece by piece (Parquet row groups, flush by flush) and made
        visible whole by `OpenWrite.close`. Locally its temp file lives in `staging` (an
        instant's marker directory, never created here: FileNotFoundError once it is
        gone), so sealing that directory takes the unfinished file with it and its close
        fails: no reader ever lists an unclosed file, and a writer that outlived its
        instant lands nothing. S3: the bytes gather in memory, one PUT at close (after a
        check that `staging` is still open)."""
        return OpenWrite(self, path, staging)

    def parquet_rows(self, path: str) -> int:
        """A Parquet file's row count, from its footer only."""
        full = self.full_path(path)
        self._hook("read", full)
        try:
            with self.filesystem.open_input_file(full) as f:
                return pq.ParquetFile(f).metadata.num_rows
        except (pa.ArrowInvalid, OSError) as e:
            raise CorruptFileError(full, str(e)) from None

    def read_parquet(self, path: str, columns: builtins.list[str] | None = None) -> pa.Table:
        """Read a Parquet file; a torn or corrupt one raises CorruptFileError naming it."""
        full = self.full_path(path)
        data = self.read_bytes(path)
        try:
            if columns is None:
                return pq.read_table(pa.BufferReader(data))
            # Only the columns the file has (an older file may lack a newer column).
            parquet = pq.ParquetFile(pa.BufferReader(data))
            return parquet.read(columns=[c for c in columns if c in parquet.schema_arrow.names])
        except (pa.ArrowInvalid, OSError) as e:
            raise CorruptFileError(full, str(e)) from None
