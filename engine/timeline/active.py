"""The active timeline: instant files in `.hoodie/timeline/`, loaded by listing.

Transitions: create_requested (put-if-absent; the engine's JSON) -> inflight (empty) ->
complete (Hudi's Avro `HoodieCommitMetadata`, then the pending files are removed). Queries
transparently consult the archived timeline for instants that were moved there. A
compaction completes as Hudi's `commit` action (`<t>_<c>.commit`); in a merge-on-read
table (`compaction_commits`) a completed `commit` is read back as the compaction it is.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Mapping
from typing import Any

from engine.config import Safety
from engine.errors import CorruptInstantError, InstantExistsError
from engine.storage import Storage
from engine.timeline.archive import ArchivedTimeline
from engine.timeline.commit_metadata import CommitMetadata
from engine.timeline.instant import COMPLETED, INFLIGHT, REQUESTED, Instant, parse_file_name

TIMELINE_DIR = ".hoodie/timeline"
_RANK = {REQUESTED: 0, INFLIGHT: 1, COMPLETED: 2}
MetadataLike = CommitMetadata | Mapping[str, Any]


def _typed(metadata: MetadataLike | None) -> CommitMetadata:
    """A flat dict (CommitMetadata.to_dict's form) is read as the model it describes."""
    if isinstance(metadata, CommitMetadata):
        return metadata
    return CommitMetadata.from_dict(dict(metadata or {}))


class ActiveTimeline:
    def __init__(
        self,
        storage: Storage,
        safety: Safety | None = None,
        archive: ArchivedTimeline | None = None,
        compaction_commits: bool = False,
    ) -> None:
        self.storage, self.safety = storage, safety or Safety()
        # Merge-on-read: data instants are deltacommits, so a completed commit is a compaction.
        self.compaction_commits = compaction_commits
        self.archive = archive or ArchivedTimeline(storage, compaction_commits=compaction_commits)
        self._lock = threading.RLock()
        self._parsed: dict[str, Instant | None] = {}
        self._by_time: dict[str, Instant] = {}
        self._duplicates: dict[str, list[Instant]] = {}
        self._completed: list[Instant] = []
        self._pending: list[Instant] = []
        self._meta: dict[str, CommitMetadata] = {}  # completed file name -> metadata
        self._rollback_targets: dict[str, str] = {}  # rollback requested time -> target
        self._pins = 0  # > 0 while this process holds the table lock
        self._pinned_fresh = False  # reloaded since the lock was taken
        # engine.table.fencing.Fence, set by the table: while it is active (a lock hold
        # with fencing on) transitions are staged in the hold's grant, then published.
        self.fence: Any = None

    # -- pinning -----------------------------------------------------------------------

    def pin(self, fresh: bool = False) -> None:
        """The table lock was taken: until unpin(), only lock holders (this process) change
        the timeline, and they record their changes here, so the first reload lists the
        folder and later ones are no-ops. Saves a list and a read per reload on slow
        storage while a commit or an instant creation holds the lock. `fresh`: this hold
        directly follows this table's own previous hold (nobody else held the lock in
        between, so nobody changed the timeline): not even the first reload lists."""
        with self._lock:
            if self._pins == 0:
                self._pinned_fresh = fresh
            self._pins += 1

    def unpin(self) -> None:
        with self._lock:
            self._pins = max(0, self._pins - 1)

    # -- loading -----------------------------------------------------------------------

    def reload(self, force: bool = False) -> ActiveTimeline:
        """Re-list the timeline folder (one list call; names parsed once and cached).
        `force`: list even in a pinned hold (after sealing another holder, say)."""
        with self._lock:
            if self._pins and self._pinned_fresh and not force:
                return self
            names = self.storage.list(TIMELINE_DIR)
            parsed = {
                n: self._parsed[n]
                if n in self._parsed
                else parse_file_name(n, self.compaction_commits)
                for n in names
            }
            self._parsed = parsed
            by_time: dict[str, Instant] = {}
            duplicates: dict[str, list[Instant]] = {}
            for instant in parsed.values():
                if instant is None:
                    continue
                seen = by_time.get(instant.requested_time)
                if seen is not None and seen.is_completed and instant.is_completed:
                    duplicates.setdefault(instant.requested_time, [seen]).append(instant)
                if seen is None or _newer(instant, seen):
                    by_time[instant.requested_time] = instant
            self.archive.reload()  # after the listing: an instant archived meanwhile is in one
            for t in [t for t, i in by_time.items() if i.is_pending and self.archive.get(t)]:
                # Pending files an archival left behind (a committer died before removing
                # them, the completed file hid them): the archived completion wins.
                del by_time[t]
            self._by_time, self._duplicates = by_time, duplicates
            self._index()
            self._pinned_fresh = self._pins > 0
        return self

    def _index(self) -> None:
        values = self._by_time.values()
        self._completed = sorted((i for i in values if i.is_completed), key=_by_completion)
        self._pending = sorted((i for i in values if i.is_pending), key=lambda i: i.requested_time)

    def _put(self, instant: Instant) -> None:
        with self._lock:
            self._by_time[instant.requested_time] = instant
            self._index()

    def _drop(self, requested_time: str) -> None:
        with self._lock:
            self._by_time.pop(requested_time, None)
            self._index()

    # -- queries -----------------------------------------------------------------------

    def instants(self) -> list[Instant]:
        """Active instants (pending and completed) ordered by requested time."""
        return sorted(self._by_time.values(), key=lambda i: i.requested_time)

    def get(self, requested_time: str) -> Instant | None:
        return self._by_time.get(requested_time) or self.archive.get(requested_time)

    def completed(self, include_archived: bool = False) -> list[Instant]:
        """Completed instants ordered by completion time."""
        if not include_archived:
            return list(self._completed)
        active = {i.requested_time for i in self._completed}
        archived = [i for i in self.archive.instants() if i.requested_time not in active]
        return sorted([*archived, *self._completed], key=_by_completion)

    def pending(self, action: str | None = None) -> list[Instant]:
        """Pending instants ordered by requested time."""
        return [i for i in self._pending if action is None or i.action == action]

    def completion_time_of(self, requested_time: str) -> str | None:
        instant = self._by_time.get(requested_time)
        if instant is not None:
            return instant.completion_time
        return self.archive.completion_time_of(requested_time)

    def completed_in(self, begin_exclusive: str | None, end_inclusive: str | None) -> list[Instant]:
        """Instants with begin < completion time <= end, ordered by completion time."""
        active = [
            i
            for i in self._completed
            if (begin_exclusive is None or i.completed_at > begin_exclusive)
            and (end_inclusive is None or i.completed_at <= end_inclusive)
        ]
        seen = {i.requested_time for i in active}
        archived = [
            i
            for i in self.archive.completed_in(begin_exclusive, end_inclusive)
            if i.requested_time not in seen and i.requested_time not in self._by_time
        ]
        return sorted([*archived, *active], key=_by_completion) if archived else active

    def last_completion_time(self) -> str | None:
        times = [self._completed[-1].completed_at] if self._completed else []
        archived = self.archive.instants()
        if archived:
            times.append(archived[-1].completed_at)
        return max(times) if times else None

    def max_instant_time(self) -> str | None:
        """The largest requested or completion time on the timeline (active or archived)."""
        times = [
            t for i in self._by_time.values() for t in (i.requested_time, i.completion_time) if t
        ]
        archived_max = self.archive.max_time()
        if archived_max:
            times.append(archived_max)
        return max(times) if times else None

    def duplicated_times(self) -> dict[str, list[Instant]]:
        """Requested times that more than one completed file claims (a collision happened)."""
        return {k: list(v) for k, v in self._duplicates.items()}

    def _metadata_since_completed(self, instant: Instant) -> CommitMetadata:
        """A pending instant's files are removed once it completes (`complete`), so one this
        timeline loaded as pending (a reader's, while a table service runs) may be gone:
        its metadata is then its completed file's. FileNotFoundError if it did not
        complete (rolled back, or a torn timeline)."""
        self.reload()
        now = self.get(instant.requested_time)
        if now is None or not now.is_completed:
            raise FileNotFoundError(f"{TIMELINE_DIR}/{instant.file_name}: gone, not completed")
        return self.read_metadata(now)

    def rolled_back(self) -> set[str]:
        """Requested times of instants that a (pending or completed) rollback targets."""
        targets = set()
        for instant in self._by_time.values():
            if instant.action == "rollback":
                targets.add(self._rollback_target(instant))
        for instant in self.archive.instants():
            if instant.action == "rollback":
                targets.add(self._rollback_target(instant))
        return targets

    def is_rolled_back(self, requested_time: str) -> bool:
        return requested_time in self.rolled_back()

    def _rollback_target(self, instant: Instant) -> str:
        target = self._rollback_targets.get(instant.requested_time)
        if target is None:
            record = self.read_metadata(instant).rollback
            if record is None:
                raise CorruptInstantError(instant.file_name, "a rollback without its target")
            target = record.rolled_back
            self._rollback_targets[instant.requested_time] = target
        return target

    def read_metadata(self, instant: Instant | str) -> CommitMetadata:
        """An instant's metadata: its completed file (Avro), else its requested file (JSON;
        a compaction's plan Avro)."""
        if isinstance(instant, str):
            found = self.get(instant)
            if found is None:
                raise KeyError(f"no instant {instant} on the timeline")
            instant = found
        name = instant.file_name
        cached = self._meta.get(name)
        if cached is not None:
            return cached
        if instant.is_completed and instant.requested_time not in self._by_time:
            meta = CommitMetadata.from_avro_bytes(
                self.archive.metadata_bytes(instant.requested_time), f"archived instant {name}"
            )
        else:
            if instant.state == INFLIGHT:  # inflight files are written empty: no metadata
                return self.read_metadata(instant.with_state(REQUESTED))
            path = f"{TIMELINE_DIR}/{name}"
            try:
                data = self.storage.read_bytes(path)
            except FileNotFoundError:
                if instant.is_completed:
                    raise
                return self._metadata_since_completed(instant)
            file = self.storage.full_path(path)
            if instant.is_completed:
                meta = CommitMetadata.from_avro_bytes(data, file)
            else:
                meta = CommitMetadata.from_pending_bytes(data, file)
        if instant.is_completed:  # immutable: cache
            self._meta[name] = meta
        return meta

    # -- transitions (callers hold the table lock) ----------------------------------------

    def create_requested(
        self, action: str, requested_time: str, metadata: MetadataLike | None = None
    ) -> Instant:
        """Create `<t>.<action>.requested`.

        With put_if_absent a time that is taken (pending or completed, any action) raises
        InstantExistsError; without it the file is silently overwritten."""
        instant = Instant(requested_time, action, REQUESTED)
        path = f"{TIMELINE_DIR}/{instant.file_name}"
        data = _typed(metadata).to_requested_bytes(action)
        if not self.safety.put_if_absent:
            self._write(path, data, exclusive=False)  # last writer silently wins
            self._put(instant)
            return instant
        try:
            self._write(path, data, exclusive=True)
        except FileExistsError:
            raise InstantExistsError(self.storage.full_path(path)) from None
        # The same time under another action, or already completed (its pending files gone).
        # A pinned reload may not list: this table's own instants since its last listing
        # are in _by_time only.
        self.reload()
        clash = [
            n
            for n, i in self._parsed.items()
            if i is not None and i.requested_time == requested_time and n != instant.file_name
        ]
        known = self._by_time.get(requested_time)
        if known is not None and known.file_name != instant.file_name:
            clash.append(known.file_name)
        if clash:
            self.storage.delete(path, missing_ok=True)
            self._drop(requested_time)
            raise InstantExistsError(
                self.storage.full_path(f"{TIMELINE_DIR}/{clash[0]}"), "already uses this time"
            )
        self._put(instant)  # the reload may have been a no-op (pinned)
        return instant

    def transition_to_inflight(self, instant: Instant) -> Instant:
        inflight = instant.with_state(INFLIGHT)
        self._write(f"{TIMELINE_DIR}/{inflight.file_name}", b"", exclusive=False)
        self._put(inflight)
        return inflight

    def complete(
        self,
        instant: Instant,
        completion_time: str,
        metadata: MetadataLike,
        remove_pending_files: bool = True,
    ) -> Instant:
        """Write the completed file atomically, then remove the pending files (unless the
        caller does that itself: after releasing the table lock, say)."""
        done = instant.with_state(COMPLETED, completion_time)
        path = f"{TIMELINE_DIR}/{done.file_name}"
        metadata = _typed(metadata)
        data = metadata.to_avro_bytes(instant.action, instant.requested_time)
        exclusive = self.safety.put_if_absent
        try:
            # The claim keyed by the requested time alone: a second completion fails.
            self._write(path, data, exclusive=exclusive, claim=instant.requested_time)
        except FileExistsError:
            raise InstantExistsError(self.storage.full_path(path)) from None
        self._meta[done.file_name] = metadata
        self._put(done)
        # The completed file is the commit point: leftover pending files are harmless (the
        # completed state wins on load), so a failure to remove them is not a failed commit.
        if remove_pending_files:
            with contextlib.suppress(OSError):
                self.remove_pending(instant)
        return done

    def _write(self, path: str, data: bytes, exclusive: bool, claim: str | None = None) -> None:
        if self.fence is not None:  # fenced in a lock hold (engine/table/fencing.py)
            self.fence.put(path, data, exclusive=exclusive, claim=claim)
            return
        if exclusive:
            self.storage.put_if_absent(path, data)
        else:
            self.storage.write_bytes(path, data)

    def remove_pending(self, instant: Instant) -> None:
        for state in (INFLIGHT, REQUESTED):
            self.storage.delete(f"{TIMELINE_DIR}/{instant.pending_file(state)}", missing_ok=True)
        with self._lock:
            current = self._by_time.get(instant.requested_time)
            if current is not None and current.is_pending:
                self._drop(instant.requested_time)

    def remove_completed(self, instant: Instant) -> None:
        """Under the table lock (archival, a forced rollback): fenced like the writes. The
        pending files go first, the completed file last: a committer that died between its
        completed file and remove_pending left them (the completed state hid them), and
        without the completed file they would read as a pending instant again, one that
        nothing can finish (its completion is claimed) and that blocks archival. A crash
        in between leaves an instant that is completed still (archiving it twice is fine)."""
        pending = [instant.pending_file(state) for state in (INFLIGHT, REQUESTED)]
        for name in [*pending, instant.file_name]:
            path = f"{TIMELINE_DIR}/{name}"
            if self.fence is not None:
                self.fence.delete(path)
            else:
                self.storage.delete(path, missing_ok=True)
        with self._lock:
            if self._by_time.get(instant.requested_time) == instant:
                self._drop(instant.requested_time)


def _newer(a: Instant, b: Instant) -> bool:
    if a.is_completed and b.is_completed:
        return (a.completion_time or "") > (b.completion_time or "")
    return _RANK[a.state] > _RANK[b.state]


def _by_completion(i: Instant) -> tuple[str, str]:
    return (i.completion_time or "", i.requested_time)
