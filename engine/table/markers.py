"""Write markers (Hudi's direct markers): every data file an instant creates is recorded
first, so files no commit lists can be found and deleted without listing the table.

Layout (non-partitioned, so the partition path is empty):
  .hoodie/.temp/<instant>/<fileName>.marker.CREATE   a new base file (insert, compaction)
  .hoodie/.temp/<instant>/<fileName>.marker.MERGE    a base file merged from an older one
  .hoodie/.temp/<instant>/<fileName>.marker.APPEND   a log file

The instant's marker directory is made when the instant is (start_instant, compaction
scheduling) and never by a writer: a marker is created only inside an existing directory
(put-if-absent without parents). Completion and rollback first SEAL the directory (an
atomic rename to `.hoodie/.temp/.sealed-<instant>-<id>`), so a late writer (a task attempt
still running, a zombie coordinator's compaction) can no longer create a marker, and so no
data file, for that instant; then every marked file the commit does not keep is deleted
(with the temp files of writes that died before their rename), then the directory.

Every delete goes through the table's fence (engine/table/fencing.py: Fence.delete), so a
zombie coordinator resumed after its successor's takeover deletes nothing: not before its
commit (the unlisted files), nor after it, nor in a rollback. A finish refused midway
leaves its sealed directory and the files it did not delete (orphans: no commit lists
them, so nothing reads them).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterable

from engine.errors import EngineError
from engine.storage import TEMP_PREFIX, Storage

MARKER_DIR = ".hoodie/.temp"
MARKER_EXTN = ".marker."
CREATE, MERGE, APPEND = "CREATE", "MERGE", "APPEND"
IO_TYPES = (CREATE, MERGE, APPEND)
_SEALED = ".sealed-"


class MarkerError(EngineError):
    """A data file could not be recorded: its instant's marker directory is gone (the
    instant completed or was rolled back) or was never made."""


def marker_dir(instant: str) -> str:
    return f"{MARKER_DIR}/{instant}"


def marker_name(file_name: str, io_type: str) -> str:
    return f"{file_name}{MARKER_EXTN}{io_type}"


def data_file_of(marker: str) -> str | None:
    """The data file a marker names (None for anything else in the directory)."""
    name, sep, io_type = marker.rpartition(MARKER_EXTN)
    return name if sep and io_type in IO_TYPES else None


class Markers:
    """Markers of one table. `enabled` is Safety.markers: off, nothing is recorded and
    nothing is cleaned (files of failed attempts stay on storage, visible to a listing)."""

    def __init__(
        self,
        storage: Storage,
        enabled: bool = True,
        delete: Callable[[str], None] | None = None,
    ) -> None:
        self.storage, self.enabled = storage, enabled
        # How a file is deleted (the table's fenced delete); plain by default.
        self._remove = delete or (lambda name: storage.delete(name, missing_ok=True))

    def open(self, instant: str) -> None:
        """Make the instant's marker directory (once, by whoever makes the instant)."""
        if not self.enabled:
            return
        self.storage.makedirs(MARKER_DIR)
        with contextlib.suppress(FileExistsError):
            self.storage.create_dir(marker_dir(instant))

    def create(self, instant: str, file_name: str, io_type: str) -> None:
        """Record `file_name` before it is written; MarkerError if the instant's directory
        is gone, so nothing is written for an instant that completed or rolled back."""
        if not self.enabled:
            return
        path = f"{marker_dir(instant)}/{marker_name(file_name, io_type)}"
        try:
            self.storage.put_if_absent(path, b"", parents=False)
        except FileNotFoundError:
            raise MarkerError(
                f"no marker directory {marker_dir(instant)}: instant {instant} completed, was"
                " rolled back, or was never started here; not writing " + file_name
            ) from None

    def staging_dir(self, instant: str) -> str | None:
        """Where a data file that stays open across flushes is written until it closes
        (Storage.open_write): in the instant's marker directory, so the seal of a completion
        or rollback takes it away and its late close fails. None with markers off."""
        return marker_dir(instant) if self.enabled else None

    def files(self, instant: str) -> list[str]:
        """Data files the instant's markers record (its directory not sealed yet)."""
        return self._recorded(marker_dir(instant))

    def _recorded(self, directory: str) -> list[str]:
        return sorted({f for m in self.storage.list(directory) if (f := data_file_of(m))})

    def delete_unlisted(self, instant: str, keep: Iterable[str]) -> list[str]:
        """Before completion: delete the instant's marked files that `keep` (the commit's
        files) does not list: failed task attempts, superseded eager flushes, temp files.
        Returns the deleted names."""
        if not self.enabled:
            return []
        return self._delete(self.files(instant), set(keep))

    def finish(self, instant: str, keep: Iterable[str] = ()) -> list[str]:
        """After completion (`keep` = its files) or in a rollback (`keep` empty): seal the
        directory, delete every marked file not kept, then the directory. Idempotent;
        FencedError (its deletes refused) once its holder was taken over."""
        if not self.enabled:
            return []
        sealed = f"{MARKER_DIR}/{_SEALED}{instant}-{uuid.uuid4().hex[:8]}"
        try:
            self.storage.rename(marker_dir(instant), sealed)
            dirs = [sealed]
        except FileNotFoundError:
            # Finished already, never opened, or sealed by a finish that died mid-way.
            prefix = f"{_SEALED}{instant}-"
            dirs = [
                f"{MARKER_DIR}/{e}" for e in self.storage.list(MARKER_DIR) if e.startswith(prefix)
            ]
        except OSError:
            dirs = [marker_dir(instant)]  # a store that cannot rename a directory: no seal
        deleted: list[str] = []
        for directory in dirs:
            deleted += self._delete(self._recorded(directory), set(keep))
            # Two finishers of one instant (its committer, the cleaner's leftover sweep)
            # may both list the sealed directory: the one that removes it second finds none.
            with contextlib.suppress(FileNotFoundError):
                self.storage.filesystem.delete_dir(self.storage.full_path(directory))
        return deleted

    def _delete(self, marked: list[str], keep: set[str]) -> list[str]:
        doomed = [f for f in marked if f not in keep]
        for name in doomed:
            self._remove(name)  # raises once its holder is fenced: later files stay too
        if doomed:
            # A write that died between its temp file and the rename left the temp behind
            # (`.tmp-<id>-<name>`); a listing reader would take it for another file group.
            wanted = set(doomed)
            for entry in self.storage.list(""):
                if entry.startswith(TEMP_PREFIX) and entry.split("-", 2)[-1] in wanted:
                    self._remove(entry)
        return doomed

    def open_instants(self) -> list[str]:
        """Instants whose marker directory is still there (not finished)."""
        return sorted(e for e in self.storage.list(MARKER_DIR) if not e.startswith("."))
