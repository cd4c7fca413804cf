"""The local backend: a folder on a POSIX file system (engine/storage/backend.py).

Atomic replace is a temp file renamed over the target; put-if-absent is link(2) of a
temp (it fails with EEXIST instead of replacing); compare-and-swap serialises the writers
of one directory on flock(2) of it (across processes and containers sharing the folder),
then compares and renames into place. A fence directory is a directory: rmdir(2) kills
it, after which nothing can be created in it, even by a process that resolved the path
before (the kernel marks it dead), and a staged write is decided by the link of its temp
out of it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import os
import uuid

import pyarrow as pa
import pyarrow.fs as pafs

from engine.storage.backend import TEMP_PREFIX, Encoder, Listing


class LocalPending:
    """A file written into a temp file (in `staging` if given, else beside the target)
    and renamed into place whole; the rename fails once `staging` is sealed away."""

    def __init__(self, backend: LocalBackend, full: str, staging: str | None) -> None:
        self.backend, self.full = backend, full
        head = staging if staging is not None else full.rsplit("/", 1)[0]
        self._temp = f"{head}/{TEMP_PREFIX}{uuid.uuid4().hex[:12]}-{full.rsplit('/', 1)[-1]}"
        self.stream: pa.NativeFile = backend.filesystem.open_output_stream(self._temp)

    def publish(self) -> None:
        self.stream.close()
        self.backend.filesystem.move(self._temp, self.full)  # fails once sealed away

    def abort(self) -> None:
        with contextlib.suppress(OSError):
            self.stream.close()
        with contextlib.suppress(OSError):
            self.backend.filesystem.delete_file(self._temp)


class LocalBackend:
    kind = "local"

    def __init__(self, root: str, filesystem: pafs.FileSystem | None = None) -> None:
        self.filesystem = filesystem or pafs.LocalFileSystem()
        if not isinstance(self.filesystem, pafs.LocalFileSystem):
            # Put-if-absent, compare-and-swap and sealing are POSIX calls on the folder.
            raise ValueError(f"{root}: a local folder needs pyarrow's LocalFileSystem")
        self.root = os.path.abspath(root)

    # -- writes ------------------------------------------------------------------------

    def put(self, full: str, data: bytes | pa.Buffer | Encoder) -> int:
        tmp, size = self._write_temp_sized(full, data)
        self.filesystem.move(tmp, full)
        return size

    def raw_write(self, full: str, data: bytes) -> None:
        with self.filesystem.open_output_stream(full) as f:
            f.write(data)

    def create(self, full: str, data: bytes, parents: bool, write_id: str) -> None:
        tmp = self._write_temp(full, data, parents)
        try:
            os.link(tmp, full)  # link(2) fails with EEXIST instead of replacing
        except FileExistsError:
            raise FileExistsError(f"{full} already exists") from None
        finally:
            # A sealer may have removed the half-staged temp already (then link failed).
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)

    def written_by(self, full: str, write_id: str, data: bytes) -> bool:
        """Locally a write is recognised by its bytes."""
        try:
            with self.filesystem.open_input_stream(full) as f:
                return f.read() == data
        except FileNotFoundError:
            return False

    def read_versioned(self, full: str) -> tuple[bytes, str]:
        """The version is the MD5 of the bytes (what S3's ETag of a plain PUT is too)."""
        with self.filesystem.open_input_stream(full) as f:
            data = f.read()
        return data, hashlib.md5(data).hexdigest()

    def put_if_version(
        self, full: str, data: bytes, version: str | None, write_id: str
    ) -> str | None:
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

    def put_staged(
        self,
        staging: str,
        full: str,
        data: bytes,
        claim: str | None,
        replace: bool,
        write_id: str,
    ) -> None:
        """The temp is staged in `staging` and linked out of it: a sealed directory has
        taken the temp with it (FileNotFoundError)."""
        tmp = self._write_temp(f"{staging}/{full.rsplit('/', 1)[-1]}", data, False)
        try:
            for target, exclusive in ((claim, True), (full, not replace)):
                if target is None:
                    continue
                if not exclusive:
                    self.filesystem.move(tmp, target)
                    break
                try:
                    self.link(tmp, target)
                except FileExistsError:
                    raise FileExistsError(errno.EEXIST, "already exists", target) from None
        finally:
            with contextlib.suppress(FileNotFoundError):
                self.filesystem.delete_file(tmp)

    def link(self, full_src: str, full_dst: str) -> None:
        os.link(full_src, full_dst)

    def delete_staged(self, staging: str, full: str, write_id: str) -> None:
        """`full` is moved into `staging` (a rename into a removed directory fails), then
        deleted."""
        moved = f"{staging}/{TEMP_PREFIX}{uuid.uuid4().hex[:12]}-deleted"
        try:
            self.filesystem.move(full, moved)
        except FileNotFoundError:
            if self.filesystem.get_file_info(full).type == pafs.FileType.NotFound:
                return  # deleted already
            raise FileNotFoundError(errno.ENOENT, "sealed", staging) from None
        with contextlib.suppress(FileNotFoundError):  # a sealer took it out: it deletes it
            self.filesystem.delete_file(moved)

    # -- folders -----------------------------------------------------------------------

    def create_dir(self, full: str) -> None:
        os.mkdir(full)

    def remove_dir(self, full: str, names: Listing) -> bool:
        """rmdir(2)."""
        try:
            os.rmdir(full)
        except FileNotFoundError:
            return True
        except OSError as e:
            if e.errno in (errno.ENOTEMPTY, errno.EEXIST):
                return False
            raise
        return True

    def rename(self, full_src: str, full_dst: str, files: Listing) -> None:
        self.filesystem.move(full_src, full_dst)

    def list(self, full: str) -> list[str]:
        try:
            return os.listdir(full)
        except FileNotFoundError:
            return []

    def makedirs(self, full: str) -> None:
        self.filesystem.create_dir(full, recursive=True)

    def is_folder_marker(self, data: bytes) -> bool:
        return False  # folders are folders here

    def open_pending(self, full: str, staging: str | None) -> LocalPending:
        return LocalPending(self, full, staging)

    # -- temp files --------------------------------------------------------------------

    def _write_temp(self, full: str, data: bytes, parents: bool = True) -> str:
        return self._write_temp_sized(full, data, parents)[0]

    def _write_temp_sized(
        self, full: str, data: bytes | pa.Buffer | Encoder, parents: bool = True
    ) -> tuple[str, int]:
        """A new temp file beside `full` holding `data`: its path and size."""
        head, name = full.rsplit("/", 1)
        tmp = f"{head}/{TEMP_PREFIX}{uuid.uuid4().hex[:12]}-{name}"
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
