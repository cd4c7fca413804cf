"""The backend protocol: what a table's storage (engine/storage/storage.py) asks of the
place its files live, and the contract every backend keeps. `local.py` (a folder on a
POSIX file system) and `s3.py` (an S3-compatible object store) implement it.

Paths here are full paths (the table root plus the relative path). Hooks, retries after
a lost response and write verification are the shared Storage's, never a backend's: a
backend method is one attempt.

The contract (the table's safety rests on each line; tests/unit/engine/test_storage_s3.py
runs the same cases on both backends):

* Atomic replace (`put`): a reader sees the old bytes or the new ones, never a part.
* Put-if-absent (`create`, `link`): never overwrites; of concurrent creators of one path
  exactly one succeeds and the others get FileExistsError. With `parents=False` the
  directory is never created: FileNotFoundError once it is gone or sealed.
* Compare-and-swap (`read_versioned`, `put_if_version`): a version is an opaque string
  that names the bytes (writing the same bytes again gives the same version, as an
  ETag of a plain PUT); a CAS writes only if the current version is the one given (None:
  only if absent), and of concurrent CASes from one version at most one succeeds. It
  returns the new version without reading back.
* Write ids: a conditional write tags what it writes with the caller's write id (or,
  locally, is recognised by its bytes), so `written_by` tells a retry that finds its own
  earlier attempt (whose response was lost) from someone else's write.
* Fence directories (`create_dir`, `put_staged`, `delete_staged`, `remove_dir`): once
  `remove_dir` has sealed a directory, nothing is created in it or decided through it any
  more, even by a writer that looked at it before. A staged write is decided at one point
  (locally the link of its temp out of the directory; on S3 a compare-and-swap on the
  directory's marker): decided before the seal, it lands (the sealer finishes it on S3);
  after, it fails with FileNotFoundError.
* Listings (`list`): a listing belongs to no single instant. An entry that existed before
  it began and still exists after it ends is listed; one created or removed while it runs
  may be listed or not. Temp files (TEMP_PREFIX) are listed too (callers skip them), and
  on S3 a folder marker and the folder of the same name are listed once.
* Nothing relies on rename being atomic: on S3 a rename of a folder seals it in place
  first, then moves its objects one by one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import pyarrow as pa
import pyarrow.fs as pafs

TEMP_PREFIX = ".tmp-"  # a file being written; renamed or linked into place when whole
# Writes a file's bytes into an output stream (engine/table/data_files.py's Parquet encoder).
Encoder = Callable[[pa.NativeFile], None]
# A listing made through the storage's hooks (names in a folder, or full paths of files).
Listing = Callable[[], list[str]]


def encoded(data: bytes | pa.Buffer | Encoder) -> bytes | pa.Buffer:
    """The bytes of `data` in memory (an object store takes a file in one PUT)."""
    if not callable(data):
        return data
    sink = pa.BufferOutputStream()
    data(sink)
    return sink.getvalue()


class ResponseLostError(OSError):
    """Raised by a hook: the write goes ahead, then its response is lost (fault injection)."""


class PendingFile(Protocol):
    """A file written piece by piece into `stream`, published whole by `publish`."""

    stream: pa.NativeFile

    def publish(self) -> None:
        """Make the file visible whole; FileNotFoundError if its staging folder was sealed."""

    def abort(self) -> None:
        """Drop the unfinished file."""


class Backend(Protocol):
    kind: str  # local | s3 (result.json's environment.storage.kind)
    root: str  # the table root as `filesystem` names paths
    filesystem: pafs.FileSystem  # streams, file info, deletes and moves

    def put(self, full: str, data: bytes | pa.Buffer | Encoder) -> int:
        """Atomic replace; the bytes written."""

    def raw_write(self, full: str, data: bytes) -> None:
        """Overwrite in place (fault injection: a torn file)."""

    def create(self, full: str, data: bytes, parents: bool, write_id: str) -> None:
        """Put-if-absent (FileExistsError); `parents=False`: FileNotFoundError if the
        directory is gone or sealed."""

    def written_by(self, full: str, write_id: str, data: bytes) -> bool:
        """Is the object at `full` the write `write_id` (locally: holding `data`)?"""

    def read_versioned(self, full: str) -> tuple[bytes, str]:
        """The bytes and their version; FileNotFoundError if absent."""

    def put_if_version(
        self, full: str, data: bytes, version: str | None, write_id: str
    ) -> str | None:
        """Compare-and-swap: the new version, or None if the current one is not `version`."""

    def put_staged(
        self,
        staging: str,
        full: str,
        data: bytes,
        claim: str | None,
        replace: bool,
        write_id: str,
    ) -> None:
        """Publish `data` at `claim` (if given) then `full`, each only if absent (`replace`:
        `full` is replaced), decided through the fence directory `staging`."""

    def link(self, full_src: str, full_dst: str) -> None:
        """`full_dst` holds the bytes of `full_src`, only if absent."""

    def create_dir(self, full: str) -> None:
        """One directory, never its parents (FileExistsError, FileNotFoundError)."""

    def remove_dir(self, full: str, names: Listing) -> bool:
        """Seal an empty directory: True once it is gone (or sealed), False if not empty;
        `names` lists it through the hooks."""

    def rename(self, full_src: str, full_dst: str, files: Listing) -> None:
        """Move a file, or a folder (`files`: the full paths under it, through the hooks)."""

    def delete_staged(self, staging: str, full: str, write_id: str) -> None:
        """Delete `full` only while the fence directory `staging` is open."""

    def list(self, full: str) -> list[str]:
        """Names of the entries of a folder; [] if it does not exist."""

    def makedirs(self, full: str) -> None:
        """A folder and its parents (an open folder: fence directories are made so)."""

    def is_folder_marker(self, data: bytes) -> bool:
        """Are these the bytes of a folder's own record (S3's markers), not of a file?"""

    def open_pending(self, full: str, staging: str | None) -> PendingFile:
        """A file to be written piece by piece; `staging`: a fence directory whose seal
        takes the unfinished file with it (never created here)."""
