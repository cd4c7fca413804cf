"""File system access for one table root, through pyarrow.fs, with fault hooks.

The root is a local folder or an object-store location `s3://BUCKET/PREFIX[?endpoint=URL]`
(engine/storage_s3.py). This module is the one place that knows the difference: on S3,
writes are plain PUTs (an object appears whole), put-if-absent is a conditional PUT
(`If-None-Match: *`) and compare-and-swap is `If-Match: <etag>`; nothing relies on rename,
and fencing's folders (grants, epochs) are marker objects changed by compare-and-swap
(storage_s3.Folders).

Paths are relative to the root, '/'-separated. Every operation first calls each
`hooks` entry with (op, full_path), op in put | rename | delete | read | list, so the
harness can add latency or raise; every write then calls each `after_write_hooks`
entry with the full path (to tear a file). A hook that raises ResponseLostError lets a
write happen and then loses its response (a timeout after the store applied it): the
storage retries the write, as an SDK does, and the retry must be idempotent.
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import fcntl
import hashlib
import os
import uuid
from collections.abc import Callable, Iterable

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from engine import storage_s3
from engine.errors import CorruptFileError

Hook = Callable[[str, str], None]
AfterWriteHook = Callable[[str], None]
TEMP_PREFIX = ".tmp-"  # a file being written; renamed or linked into place when whole
# Writes a file's bytes into an output stream (engine/table/data_files.py's Parquet encoder).
Encoder = Callable[[pa.NativeFile], None]


def _encoded(data: bytes | pa.Buffer | Encoder) -> bytes | pa.Buffer:
    """The bytes of `data` in memory (an object store takes a file in one PUT)."""
    if not callable(data):
        return data
    sink = pa.BufferOutputStream()
    data(sink)
    return sink.getvalue()


class ResponseLostError(OSError):
    """Raised by a hook: the write goes ahead, then its response is lost (fault injection)."""


class OpenWrite:
    """Storage.open_write's file: `stream` takes the bytes, `close` publishes them (one
    "put" for the hooks, as a PUT of the whole file; a lost response needs no retry: the
    rename or PUT landed), `abort` drops them."""

    def __init__(self, storage: Storage, path: str, staging: str | None) -> None:
        self.storage, self.path, self.staging = storage, path, staging
        self.full = storage.full_path(path)
        self._temp: str | None = None
        if storage._s3 is not None:
            self.stream: pa.NativeFile = pa.BufferOutputStream()
            return
        head = storage.full_path(staging) if staging is not None else self.full.rsplit("/", 1)[0]
        self._temp = f"{head}/{TEMP_PREFIX}{uuid.uuid4().hex[:12]}-{path.rsplit('/', 1)[-1]}"
        self.stream = storage.filesystem.open_output_stream(self._temp)

    def close(self) -> int:
        """Publish the file; returns its size. FileNotFoundError if `staging` was sealed
        meanwhile; CorruptFileError (with verify_writes) if it did not land whole."""
        size = self.stream.tell()
        storage, s3 = self.storage, self.storage._s3
        storage._hook("put", self.full)
        if s3 is not None:
            if self.staging is not None:
                storage._folders.refuse_if_sealed(storage.full_path(self.staging))
            s3.put(self.full, self.stream.getvalue(), storage_s3.new_write_id())
        else:
            assert self._temp is not None
            self.stream.close()
            storage.filesystem.move(self._temp, self.full)  # fails once sealed away
        storage._after_write(self.full)
        storage._verify_size(self.path, size)
        return size

    def abort(self) -> None:
        """Drop the unfinished file (a sealed directory took it already)."""
        with contextlib.suppress(OSError):
            self.stream.close()
        if self._temp is not None:
            with contextlib.suppress(OSError):
                self.storage.filesystem.delete_file(self._temp)


class Storage:
    def __init__(self, root: str, filesystem: pafs.FileSystem | None = None) -> None:
        # An object store: conditional requests through boto3, the rest through pyarrow.
        self._s3: storage_s3.Objects | None = None
        if storage_s3.is_s3(root):
            location = storage_s3.parse_location(root)
            self._s3 = storage_s3.Objects(location)
            self._folders = storage_s3.Folders(self._s3)
            filesystem = filesystem or storage_s3.filesystem(location.endpoint, location.region)
            root = location.root
        self.filesystem = filesystem or pafs.LocalFileSystem()
        self._local = isinstance(self.filesystem, pafs.LocalFileSystem)
        self.root = os.path.abspath(root) if self._local else root.rstrip("/")
        self.hooks: list[Hook] = []
        self.verify_writes = True  # set from Safety.verify_writes by the table
        self.after_write_hooks: list[AfterWriteHook] = []

    @property
    def kind(self) -> str:
        """local | s3 (what result.json records as environment.storage.kind)."""
        return "s3" if self._s3 is not None else "local"

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
        if self._s3 is not None:
            self._s3.put(full, data, storage_s3.new_write_id())
            return
        with self.filesystem.open_output_stream(full) as f:
            f.write(data)

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
            if self._s3 is not None:
                body = _encoded(data)
                self._s3.put(full, body, storage_s3.new_write_id())
                size = len(body)
            else:
                tmp, size = self._write_temp_sized(full, data)
                self.filesystem.move(tmp, full)
        self._after_write(full)
        return size

    def put_if_absent(self, path: str, data: bytes, parents: bool = True) -> None:
        """Create `path` atomically; FileExistsError if it exists (never overwrites).

        parents=False never creates the directory: FileNotFoundError once it is removed
        (how a sealed fence directory refuses a staged write, engine/table/fencing.py).
        A retry after a lost response that finds this call's own object is no conflict."""
        full = self.full_path(path)
        write_id = storage_s3.new_write_id()
        for attempt in range(2 if self._hook("put", full) else 1):
            try:
                self._create_once(full, data, parents, write_id)
            except FileExistsError:
                if not (attempt and self._written_by(full, write_id, data)):
                    raise
        self._after_write(full)

    def _written_by(self, full: str, write_id: str | None, data: bytes) -> bool:
        """Is the object at `full` this write's own (S3: its write id; local: its bytes)?"""
        try:
            if self._s3 is not None:
                return self._s3.get(full)[2] == write_id
            return self.raw_read(full) == data
        except FileNotFoundError:
            return False

    # -- versioned reads and compare-and-swap (a lock record, a register) ---------------

    def read_versioned(self, path: str) -> tuple[bytes, str]:
        """The bytes at `path` and their version (an opaque string: S3's ETag; locally the
        MD5 of the bytes, which is what S3's ETag of a plain PUT is too); FileNotFoundError
        if absent. Like an ETag, a version names the bytes: writing the same bytes again
        gives the same version."""
        full = self.full_path(path)
        self._hook("read", full)
        if self._s3 is not None:
            data, etag, _ = self._s3.get(full)
            return data, etag
        with self.filesystem.open_input_stream(full) as f:
            data = f.read()
        return data, hashlib.md5(data).hexdigest()

    def put_if_version(self, path: str, data: bytes, version: str | None) -> str | None:
        """Write `data` to `path` only if its current version is `version` (None: only if
        `path` is absent); returns the new version (as read_versioned would: a CAS needs no
        read-back), None if not. S3: a PUT with If-Match / If-None-Match, whose reply
        carries the ETag. Locally the writers of one directory serialise on flock(2) of it
        (across processes and containers sharing the folder), then compare and rename into
        place. A retry after a lost response that finds this call's own write counts as
        success (the version is the first attempt's: the object found is that write)."""
        full = self.full_path(path)
        lost = self._hook("put", full)
        write_id = storage_s3.new_write_id()
        new: str | None = None
        for attempt in range(2 if lost else 1):
            landed = self._cas_once(full, data, version, write_id)
            if landed is not None:
                new = landed
            elif not (attempt and self._written_by(full, write_id, data)):
                return None
        if new is not None:
            self._after_write(full)
        return new

    def _cas_once(self, full: str, data: bytes, version: str | None, write_id: str) -> str | None:
        if self._s3 is not None:
            try:
                return self._s3.put(
                    full, data, write_id, if_none_match=version is None, if_match=version
                )
            except (storage_s3.PreconditionFailed, FileNotFoundError):
                return None
        if not self._local:
            raise NotImplementedError(f"compare-and-swap on {type(self.filesystem).__name__}")
        head = full.rsplit("/", 1)[0]
        os.makedirs(head, exist_ok=True)
        fd = os.open(head, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                with open(full, "rb") as f:
                    current: str | None = hashlib.md5(f.read()).hexdigest()
            except FileNotFoundError:
                current = None
            if current != version:
                return None
            os.replace(self._write_temp(full, data), full)
            return hashlib.md5(data).hexdigest()
        finally:
            os.close(fd)  # closing releases the flock

    def _create_once(self, full: str, data: bytes, parents: bool, write_id: str) -> None:
        if self._s3 is not None:
            try:
                self._s3.put(full, data, write_id, if_none_match=True)
            except storage_s3.PreconditionFailed:
                raise FileExistsError(f"{full} already exists") from None
            if not parents:  # created in a sealed folder: refused (storage_s3.Folders)
                self._folders.refuse_if_sealed(full.rsplit("/", 1)[0])
        elif self._local:
            tmp = self._write_temp(full, data, parents)
            try:
                os.link(tmp, full)  # link(2) fails with EEXIST instead of replacing
            except FileExistsError:
                raise FileExistsError(f"{full} already exists") from None
            finally:
                # A sealer may have removed the half-staged temp already (then link failed).
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
        else:
            # Object stores need a conditional PUT; pyarrow.fs has none, so this is a check
            # then write, atomic only against readers, not against a concurrent creator.
            if not parents and self._info(full.rsplit("/", 1)[0]).type != pafs.FileType.Directory:
                raise FileNotFoundError(full)
            if self._info(full).type != pafs.FileType.NotFound:
                raise FileExistsError(f"{full} already exists")
            with self.filesystem.open_output_stream(full) as f:
                f.write(data)

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
        full path, if `claim` or `path` exists. S3: storage_s3.Folders.put_staged.
        A retry after a lost response that finds its claim and path written by this call
        (S3: its write id; local: its bytes) is no conflict."""
        full = self.full_path(path)
        write_id = storage_s3.new_write_id()
        for attempt in range(2 if self._hook("put", full) else 1):
            try:
                self._put_staged_once(staging, path, data, claim, replace, write_id)
            except FileExistsError:
                landed = [t for t in (claim, path) if t is not None]
                if not (
                    attempt
                    and all(self._written_by(self.full_path(t), write_id, data) for t in landed)
                ):
                    raise
        self._after_write(full)

    def _put_staged_once(
        self, staging: str, path: str, data: bytes, claim: str | None, replace: bool, write_id: str
    ) -> None:
        full = self.full_path(path)
        if self._s3 is not None:
            claim_full = self.full_path(claim) if claim is not None else None
            self._folders.put_staged(
                self.full_path(staging), full, data, claim_full, replace, write_id
            )
            return
        tmp = self._write_temp(f"{self.full_path(staging)}/{path.rsplit('/', 1)[-1]}", data, False)
        try:
            for target, exclusive in ((claim, True), (path, not replace)):
                if target is None:
                    continue
                target_full = self.full_path(target)
                if not exclusive:
                    self.filesystem.move(tmp, target_full)
                    break
                try:
                    self._link_full(tmp, target_full)
                except FileExistsError:
                    raise FileExistsError(errno.EEXIST, "already exists", target_full) from None
        finally:
            with contextlib.suppress(FileNotFoundError):
                self.filesystem.delete_file(tmp)

    @staticmethod
    def _lose(lost: bool, full: str) -> None:
        """A write without a retry here whose response a hook lost: it landed, the caller
        gets the error (as from a store that timed out after applying it)."""
        if lost:
            raise ResponseLostError(errno.ETIMEDOUT, "response lost after the write landed", full)

    def _link_full(self, full_src: str, full_dst: str) -> None:
        if self._local:
            os.link(full_src, full_dst)
            return
        if self._s3 is not None:  # a conditional PUT of the source's bytes
            try:
                self._s3.put(
                    full_dst,
                    self._s3.get(full_src)[0],
                    storage_s3.new_write_id(),
                    if_none_match=True,
                )
            except storage_s3.PreconditionFailed:
                raise FileExistsError(full_dst) from None
            return
        with self.filesystem.open_input_stream(full_src) as f:
            data = f.read()
        if self._info(full_dst).type != pafs.FileType.NotFound:
            raise FileExistsError(full_dst)
        with self.filesystem.open_output_stream(full_dst) as f:
            f.write(data)

    def link(self, src: str, dst: str) -> None:
        """Make `dst` hold the bytes of `src`, only if `dst` is absent: FileExistsError if it
        exists, FileNotFoundError if `src` is gone. Local storage: a hard link, atomic."""
        full_dst = self.full_path(dst)
        lost = self._hook("put", full_dst)
        self._link_full(self.full_path(src), full_dst)
        self._lose(lost, full_dst)

    def create_dir(self, path: str) -> None:
        """Create one directory, never its parents: FileExistsError if it exists,
        FileNotFoundError if the parent does not (a removed parent stays removed)."""
        full = self.full_path(path)
        lost = self._hook("put", full)
        if self._local:
            os.mkdir(full)
        elif self._s3 is not None:
            self._folders.create(full)
        else:
            self._create_dir_checked(full)
        self._lose(lost, full)

    def _create_dir_checked(self, full: str) -> None:
        if self._info(full.rsplit("/", 1)[0]).type != pafs.FileType.Directory:
            raise FileNotFoundError(full)
        if self._info(full).type != pafs.FileType.NotFound:
            raise FileExistsError(full)
        self.filesystem.create_dir(full, recursive=False)

    def remove_dir(self, path: str) -> bool:
        """Remove an empty directory: True once it is gone, False if it is not empty.

        Local storage: rmdir(2), after which nothing can be created in it any more, even by
        a process that resolved the path before (the kernel marks the directory dead).
        S3: a folder made by create_dir/makedirs is sealed in place, with the folders in it
        (storage_s3.Folders.seal); True."""
        full = self.full_path(path)
        self._hook("delete", full)
        if self._local:
            try:
                os.rmdir(full)
            except FileNotFoundError:
                return True
            except OSError as e:
                if e.errno in (errno.ENOTEMPTY, errno.EEXIST):
                    return False
                raise
            return True
        if self._s3 is not None and self._folders.seal(full) is not None:
            for name in self.list(path):  # a folder of folders: seal those still open
                with contextlib.suppress(NotADirectoryError):
                    self._folders.seal(f"{full}/{name}")
            return True
        if self.list(path):
            return False
        with contextlib.suppress(FileNotFoundError):
            self.filesystem.delete_dir(full)
        return True

    def _write_temp(self, full: str, data: bytes, parents: bool = True) -> str:
        return self._write_temp_sized(full, data, parents)[0]

    def _write_temp_sized(
        self, full: str, data: bytes | pa.Buffer | Encoder, parents: bool = True
    ) -> tuple[str, int]:
        """A new temp file beside `full` holding `data`: its path and size."""
        head, name = full.rsplit("/", 1)
        tmp = f"{head}/{TEMP_PREFIX}{uuid.uuid4().hex[:12]}-{name}"
        if self._s3 is not None:  # one PUT (pyarrow's output stream uploads in parts)
            body = _encoded(data)
            self._s3.put(tmp, body, storage_s3.new_write_id())
            return tmp, len(body)
        try:
            out = self.filesystem.open_output_stream(tmp)
        except FileNotFoundError:
            if not parents:
                raise
            self.filesystem.create_dir(head, recursive=True)
            out = self.filesystem.open_output_stream(tmp)
        try:
            with out:
                if callable(data):
                    data(out)
                else:
                    out.write(data)
                size = out.tell()
        except BaseException:  # an encoder that fails (bad rows) leaves no temp file behind
            with contextlib.suppress(OSError):
                self.filesystem.delete_file(tmp)
            raise
        return tmp, size

    # -- metadata operations -----------------------------------------------------------

    def rename(self, src: str, dst: str) -> None:
        full_src = self.full_path(src)
        self._hook("rename", full_src)
        if self._info(full_src).type == pafs.FileType.NotFound:
            raise FileNotFoundError(full_src)
        sealed = self._folders.seal(full_src) if self._s3 is not None else None
        if sealed is not None:
            # A folder: sealed where it is (nothing is created in it any more; sealed before
            # this call, it is gone as after a rename), then its objects move, one copy and
            # delete each (no one adds to it meanwhile), under a folder as pyarrow makes one.
            if not sealed:
                raise FileNotFoundError(full_src)
            self.filesystem.create_dir(self.full_path(dst), recursive=False)
            for rel in self.walk(src):
                self.filesystem.move(self.full_path(rel), self.full_path(dst + rel[len(src) :]))
            return
        self.filesystem.move(full_src, self.full_path(dst))

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
        removed directory fails), then deleted; S3: storage_s3.Folders.delete_staged.
        FileNotFoundError, with `filename` staging's full path, once it is sealed; a
        missing `path` is no error."""
        full, full_staging = self.full_path(path), self.full_path(staging)
        self._hook("delete", full)
        if self._s3 is not None:
            self._folders.delete_staged(full_staging, full, storage_s3.new_write_id())
            return
        moved = f"{full_staging}/{TEMP_PREFIX}{uuid.uuid4().hex[:12]}-deleted"
        try:
            self.filesystem.move(full, moved)
        except FileNotFoundError:
            if self._info(full).type == pafs.FileType.NotFound:
                return  # deleted already
            raise FileNotFoundError(errno.ENOENT, "sealed", full_staging) from None
        with contextlib.suppress(FileNotFoundError):  # a sealer took it out: it deletes it
            self.filesystem.delete_file(moved)

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
        """Names (not paths) of the entries of `directory`; [] if it does not exist."""
        full = self.full_path(directory)
        self._hook("list", full)
        if self._local:
            try:
                return os.listdir(full)
            except FileNotFoundError:
                return []
        selector = pafs.FileSelector(full, allow_not_found=True)
        # An object can share its name with a folder (a fence marker): name it once.
        return sorted({i.base_name for i in self.filesystem.get_file_info(selector)})

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
            if rel in folders or (self._s3 is not None and self._folders.is_marker(data)):
                os.makedirs(dest, exist_ok=True)
                continue
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "wb") as f:
                f.write(data)

    def makedirs(self, directory: str) -> None:
        if self._s3 is not None:  # a folder marker (storage_s3.Folders); parents are implicit
            self._folders.ensure(self.full_path(directory))
            return
        self.filesystem.create_dir(self.full_path(directory), recursive=True)

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
