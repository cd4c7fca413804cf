"""The S3 backend: an S3-compatible object store (engine/storage/backend.py).

A root is `s3://BUCKET/PREFIX[?endpoint=URL]` (engine/storage/s3_objects.py). Writes are
plain PUTs (an object appears whole), put-if-absent is a conditional PUT
(`If-None-Match: *`) and compare-and-swap is `If-Match: <etag>`, through boto3; nothing
relies on rename, and fence directories are marker objects changed by compare-and-swap
(engine/storage/s3_folders.py). Parquet, listings and plain reads go through pyarrow.fs.
"""

from __future__ import annotations

import contextlib

import pyarrow as pa
import pyarrow.fs as pafs

from engine.storage import s3_objects
from engine.storage.backend import Encoder, Listing, encoded
from engine.storage.s3_folders import Folders
from engine.storage.s3_objects import Objects, PreconditionFailed, new_write_id


class S3Pending:
    """A file gathered in memory and PUT whole, once its staging folder is still open."""

    def __init__(self, backend: S3Backend, full: str, staging: str | None) -> None:
        self.backend, self.full, self.staging = backend, full, staging
        self.stream: pa.NativeFile = pa.BufferOutputStream()

    def publish(self) -> None:
        if self.staging is not None:
            self.backend.folders.refuse_if_sealed(self.staging)
        self.backend.objects.put(self.full, self.stream.getvalue(), new_write_id())

    def abort(self) -> None:
        with contextlib.suppress(OSError):
            self.stream.close()


class S3Backend:
    kind = "s3"

    def __init__(self, location: str, filesystem: pafs.FileSystem | None = None) -> None:
        where = s3_objects.parse_location(location)
        self.objects = Objects(where)
        self.folders = Folders(self.objects)
        self.filesystem = filesystem or s3_objects.filesystem(where.endpoint, where.region)
        self.root = where.root

    # -- writes ------------------------------------------------------------------------

    def put(self, full: str, data: bytes | pa.Buffer | Encoder) -> int:
        body = encoded(data)
        self.objects.put(full, body, new_write_id())
        return len(body)

    def raw_write(self, full: str, data: bytes) -> None:
        self.objects.put(full, data, new_write_id())

    def create(self, full: str, data: bytes, parents: bool, write_id: str) -> None:
        try:
            self.objects.put(full, data, write_id, if_none_match=True)
        except PreconditionFailed:
            raise FileExistsError(f"{full} already exists") from None
        if not parents:  # created in a sealed folder: refused (s3_folders.Folders)
            self.folders.refuse_if_sealed(full.rsplit("/", 1)[0])

    def written_by(self, full: str, write_id: str, data: bytes) -> bool:
        """An object is recognised by the write id in its metadata."""
        try:
            return self.objects.get(full)[2] == write_id
        except FileNotFoundError:
            return False

    def read_versioned(self, full: str) -> tuple[bytes, str]:
        data, etag, _ = self.objects.get(full)
        return data, etag

    def put_if_version(
        self, full: str, data: bytes, version: str | None, write_id: str
    ) -> str | None:
        try:
            return self.objects.put(
                full, data, write_id, if_none_match=version is None, if_match=version
            )
        except (PreconditionFailed, FileNotFoundError):
            return None

    def put_staged(
        self,
        staging: str,
        full: str,
        data: bytes,
        claim: str | None,
        replace: bool,
        write_id: str,
    ) -> None:
        self.folders.put_staged(staging, full, data, claim, replace, write_id)

    def link(self, full_src: str, full_dst: str) -> None:
        """A conditional PUT of the source's bytes."""
        try:
            self.objects.put(
                full_dst, self.objects.get(full_src)[0], new_write_id(), if_none_match=True
            )
        except PreconditionFailed:
            raise FileExistsError(full_dst) from None

    def delete_staged(self, staging: str, full: str, write_id: str) -> None:
        self.folders.delete_staged(staging, full, write_id)

    # -- folders -----------------------------------------------------------------------

    def create_dir(self, full: str) -> None:
        self.folders.create(full)

    def remove_dir(self, full: str, names: Listing) -> bool:
        """A folder made by create_dir/makedirs is sealed in place, with the folders in it;
        a plain prefix is removed if empty."""
        if self.folders.seal(full) is not None:
            for name in names():  # a folder of folders: seal those still open
                with contextlib.suppress(NotADirectoryError):
                    self.folders.seal(f"{full}/{name}")
            return True
        if names():
            return False
        with contextlib.suppress(FileNotFoundError):
            self.filesystem.delete_dir(full)
        return True

    def rename(self, full_src: str, full_dst: str, files: Listing) -> None:
        sealed = self.folders.seal(full_src)
        if sealed is None:
            self.filesystem.move(full_src, full_dst)
            return
        # A folder: sealed where it is (nothing is created in it any more; sealed before
        # this call, it is gone as after a rename), then its objects move, one copy and
        # delete each (no one adds to it meanwhile), under a folder as pyarrow makes one.
        if not sealed:
            raise FileNotFoundError(full_src)
        self.filesystem.create_dir(full_dst, recursive=False)
        for full in files():
            self.filesystem.move(full, full_dst + full[len(full_src) :])

    def list(self, full: str) -> list[str]:
        selector = pafs.FileSelector(full, allow_not_found=True)
        # An object can share its name with a folder (a fence marker): name it once.
        return sorted({i.base_name for i in self.filesystem.get_file_info(selector)})

    def makedirs(self, full: str) -> None:
        """A folder marker (s3_folders.Folders); parents are implicit."""
        self.folders.ensure(full)

    def is_folder_marker(self, data: bytes) -> bool:
        return self.folders.is_marker(data)

    def open_pending(self, full: str, staging: str | None) -> S3Pending:
        return S3Pending(self, full, staging)
