"""Table: create/open, instant lifecycle (start, write, commit, rollback), reads.

Layout under the table path:
  .hoodie/hoodie.properties      Hudi table properties (key=value) + the engine's config
  .hoodie/timeline/              active timeline (Hudi layout 2); history/: archived LSM
  .hoodie/.heartbeat/<instant>   writer heartbeats
  .hoodie/.lock                  FileLock lease (default lock provider)
  .hoodie/.truetime              last generated time and sequence number (all processes)
  <data files>                   base and log files (non-partitioned)
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Collection, Iterable
from typing import Any

import pyarrow as pa

from engine.clock import Clock, SystemClock
from engine.config import Safety, TableConfig
from engine.errors import (
    EngineError,
    FencedError,
    InstantRolledBackError,
    InstantStateError,
    ReadOnlyTableError,
    TableExistsError,
)
from engine.layout.avro_data_block import data_columns
from engine.layout.file_names import DataFile, parse_data_file
from engine.layout.file_slices import FileSystemView
from engine.locks.base import LockProvider, default_owner
from engine.locks.registry import LockSpec, build_lock
from engine.storage import Storage
from engine.table import archival, compaction, rollback
from engine.table.appender import BaseAppender
from engine.table.catalog import Catalog
from engine.table.commit_files import effective_stats, file_problem, schema_text
from engine.table.conflicts import check_occ, check_unique_keys
from engine.table.data_files import file_rows, key_type
from engine.table.fencing import Fence
from engine.table.file_cache import FileCache
from engine.table.heartbeat import HEARTBEAT_DIR, Heartbeats
from engine.table.markers import Markers
from engine.table.merge import META_COLUMNS
from engine.table.operations import Operation, Seam, runs
from engine.table.properties import (
    avro_schema_of,
    decode_schema,
    read_properties,
    table_name,
    write_properties,
)
from engine.table.reads import read_incremental, read_view
from engine.table.stats import WriteStat
from engine.table.transaction import Transaction
from engine.table.writer import FileWriter
from engine.timeline.active import TIMELINE_DIR, ActiveTimeline
from engine.timeline.archive import HISTORY_DIR
from engine.timeline.commit_metadata import CommitMetadata, reserved_keys
from engine.timeline.instant import DATA_ACTIONS, INFLIGHT, Instant
from engine.timeline.sequence import REQUESTED_SEQ, StoredLastGenerated
from engine.truetime import InstantTimeGenerator, InstantTiming

# Keys the engine writes into commit metadata; caller metadata may not override them.
RESERVED_KEYS = reserved_keys()


def _time_of(instant: Instant | str) -> str:
    return instant if isinstance(instant, str) else instant.requested_time


class Table:
    def __init__(
        self,
        storage: Storage,
        config: TableConfig,
        schema: pa.Schema | None,
        *,
        clock: Clock | None = None,
        lock: LockProvider | None = None,
        lock_spec: LockSpec | None = None,
        safety: Safety | None = None,
        max_skew_ms: int = 200,
        writer_id: str | None = None,
        heartbeat_interval_s: float = 10.0,
        heartbeat_expiry_s: float | None = None,
        lock_timeout_s: float = 60.0,
        cache_bytes: int = 256 << 20,
        new_keys_by_bucket: bool = False,
    ) -> None:
        self.storage, self.config, self.safety = storage, config, safety or Safety()
        storage.verify_writes = self.safety.verify_writes
        self.path = storage.root
        self.clock = clock or SystemClock()
        self._truetime_store = StoredLastGenerated(storage)
        self.writer_id = writer_id or default_owner()
        # Timeline writes go through the fence (engine/table/fencing.py).
        self.fence = Fence(storage, enabled=self.safety.fencing, claims=self.safety.put_if_absent)
        self._truetime_store.fence = self.fence
        # A lock we create (`lock_spec`'s provider, FileLock by default) is ours to close
        # (its lease renewal, its session); a waiter that takes over an expired lease
        # revokes its holder's fence grant.
        self._own_lock = None
        if lock is None:
            lock = self._own_lock = build_lock(
                lock_spec or LockSpec(), storage, self.writer_id, self.fence.revoke
            )
        self.lock: LockProvider = lock
        self.lock_timeout_s = lock_timeout_s
        self._declared_schema = schema
        # Set by `open` for a table Apache Hudi wrote (its merge mode): read, never written.
        self.hudi_merge_mode: str | None = None
        self._learned_schema: pa.Schema | None = None
        # Merge-on-read data instants are deltacommits: a completed commit is a compaction.
        self.timeline = ActiveTimeline(
            storage, self.safety, compaction_commits=config.table_type == "mor"
        )
        self.timeline.fence = self.timeline.archive.fence = self.fence
        self.fence.on_claimed = lambda t: rollback.release_abandoned_claim(self, t)
        # Delete blocks hold keys as strings: reads cast them back to the key's type.
        self.catalog = Catalog(
            storage,
            self.timeline,
            self.safety,
            FileCache(cache_bytes),
            key_type=lambda: (config.key_field, key_type(self.schema, config.key_field)),
        )
        self.generator = InstantTimeGenerator(
            self.clock,
            self.lock,
            max_skew_ms,
            strict_monotonic=self.safety.strict_monotonic,
            wait=self.safety.truetime_wait,
            floor=lambda: self.timeline.reload().max_instant_time(),
            store=self._truetime_store,
            sleep=self._truetime_wait,
        )
        self.heartbeats = Heartbeats(storage, self.clock, heartbeat_interval_s)
        self.heartbeat_expiry_s = heartbeat_expiry_s or 2 * heartbeat_interval_s or 60.0
        self.markers = Markers(storage, enabled=self.safety.markers, delete=self.fence.delete)
        self._writer = FileWriter(storage, self.catalog, config, self.writer_id, self.markers)
        # A stream's writer tasks: new dynamic-index keys go where its routing sent them.
        self._writer.new_keys_by_bucket = new_keys_by_bucket
        self._started: dict[str, dict[str, Any]] = {}  # requested metadata of our instants
        self._last_hold: object | None = None  # the lock hold this table ended last, cleanly
        self._mutex = threading.RLock()
        self.last_instant_timing = InstantTiming(0.0, 0.0)
        self.timeline.reload()

    # -- create / open -------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        path: str,
        config: TableConfig,
        schema: pa.Schema | None = None,
        *,
        storage: Storage | None = None,
        **open_kwargs: Any,
    ) -> Table:
        """Create a new table (an error if one exists at `path`) and open it."""
        storage = storage or Storage(path)
        if schema is not None:
            if config.key_field not in schema.names:
                raise EngineError(f"schema has no key field {config.key_field!r}: {schema}")
            clash = [n for n in schema.names if n in META_COLUMNS]
            if clash:
                raise EngineError(f"schema uses reserved meta column names {clash}")
        for d in (TIMELINE_DIR, HISTORY_DIR, HEARTBEAT_DIR):
            storage.makedirs(d)
        try:
            write_properties(storage, config, schema)
        except FileExistsError:
            raise TableExistsError(storage.root) from None
        return cls.open(path, storage=storage, **open_kwargs)

    @classmethod
    def open(cls, path: str, *, storage: Storage | None = None, **kwargs: Any) -> Table:
        """Open an existing table; NotATableError (naming the path) if there is none."""
        storage = storage or Storage(path)
        found = read_properties(storage)
        table = cls(storage, found.config, found.schema, **kwargs)
        table.hudi_merge_mode = found.hudi_merge_mode
        return table

    def close(self) -> None:
        """Stop background threads (heartbeats; the default lock's lease renewal); remove
        this handle's fencing grant."""
        self.heartbeats.close()
        self.fence.close()
        if self._own_lock is not None:
            self._own_lock.close()

    # -- state ---------------------------------------------------------------------------

    def reload(self) -> Table:
        self.timeline.reload()
        return self

    @property
    def schema(self) -> pa.Schema | None:
        """The declared schema, else the one the latest commit recorded (None before any)."""
        if self._declared_schema is not None:
            return self._declared_schema
        if self._learned_schema is None:  # schemas do not evolve: learn it once
            for instant in reversed(self.timeline.completed(include_archived=True)):
                if instant.action in DATA_ACTIONS:
                    meta = self.timeline.read_metadata(instant)
                    if meta.arrow_schema:
                        self._learned_schema = decode_schema(meta.arrow_schema)
                        break
                    if meta.avro_schema:  # a commit of Apache Hudi's writer
                        self._learned_schema = data_columns(meta.avro_schema)
                        break
        return self._learned_schema

    def pending_instants(self) -> list[Instant]:
        return self.timeline.reload().pending()

    def view(self, as_of: str | None = None) -> FileSystemView:
        self.timeline.reload()
        return self.catalog.view(as_of)

    def data_files(self) -> list[DataFile]:
        """Every data file in the table folder (visible or not)."""
        return [f for f in map(parse_data_file, self.storage.list("")) if f is not None]

    def orphan_files(self) -> list[DataFile]:
        """Data files no completed instant references and no pending instant may still claim."""
        self.timeline.reload()
        referenced = {
            f.name
            for i in self.timeline.completed(include_archived=True)
            for f in self.catalog.files_of(i)
        }
        pending = {i.requested_time for i in self.timeline.pending()}
        return [
            f for f in self.data_files() if f.name not in referenced and f.instant not in pending
        ]

    # -- instants ------------------------------------------------------------------------

    @runs(Operation.INSTANT)
    def start_instant(
        self, action: str | None = None, metadata: dict[str, Any] | None = None
    ) -> Instant:
        """TrueTime requested time, heartbeat, REQUESTED then INFLIGHT (under the table lock).

        The returned instant carries `timing` (lock wait, TrueTime sleep)."""
        # Under the lock only what the protocol needs: the time (its sequence record is
        # written inside the TrueTime wait), REQUESTED (put-if-absent, fenced) and INFLIGHT.
        with self.locked() as held:
            generated = self.generator.generate_stamped(locked=True)
            pending = self._begin(generated.time, generated.seq, action, metadata)
        return self._started_instant(pending, generated.timing, held.wait_ms)

    @runs(Operation.INSTANT)  # also inside commit_and_start's hold: the instant's seams
    def _begin(
        self, t: str, seq: int | None, action: str | None, metadata: dict[str, Any] | None
    ) -> tuple[Instant, dict[str, Any]]:
        """REQUESTED then INFLIGHT for time `t` (under the table lock)."""
        action = action or ("commit" if self.config.table_type == "cow" else "deltacommit")
        if action == "commit" and self.config.table_type == "mor":
            raise EngineError(
                "a mor table writes deltacommits: in Hudi a completed commit of a mor table is"
                " a compaction"
            )
        meta = {
            **(metadata or {}),
            "writer_id": self.writer_id,
            "occ_baseline": self.timeline.last_completion_time(),
            REQUESTED_SEQ: seq,
        }
        requested = self.timeline.create_requested(action, t, meta)
        return self.timeline.transition_to_inflight(requested), meta

    def _started_instant(
        self, pending: tuple[Instant, dict[str, Any]], timing: InstantTiming, lock_wait_ms: float
    ) -> Instant:
        """After the lock: the heartbeat (a lazy cleaner counts an instant without a
        heartbeat file from its requested time, no older than the TrueTime wait here)."""
        inflight, meta = pending
        t = inflight.requested_time
        self.markers.open(t)  # before any writer records a file of it
        self.heartbeats.start(t)
        self._started[t] = meta
        timing = InstantTiming(timing.lock_wait_ms + lock_wait_ms, timing.truetime_sleep_ms)
        self.last_instant_timing = timing
        return Instant(t, inflight.action, INFLIGHT, timing=timing)

    def locked(self) -> _TimedLock:
        """The table lock, held for a `with` block (the timeline pinned, this hold's fencing
        grant open); `held.wait_ms` says how long it took to get. Every change of the
        table takes it, so a table Apache Hudi wrote refuses them here."""
        self._refuse_if_hudi("a change of the table")
        return _TimedLock(self)

    def _refuse_if_hudi(self, what: str) -> None:
        if self.hudi_merge_mode is not None:
            raise ReadOnlyTableError(self.path, what)

    def _truetime_wait(self, seconds: float) -> None:
        # A seam (fault injection pauses a lock holder inside the TrueTime wait).
        self.fence.seam(Seam.TRUETIME_WAIT, sleep_s=seconds)
        time.sleep(seconds)

    def heartbeat(self, instant: Instant | str) -> None:
        """Refresh (and from now on keep refreshing) the heartbeat of an instant this process
        adopted, e.g. one restored after a coordinator restart."""
        self.heartbeats.start(_time_of(instant))

    def write_files(
        self,
        instant: Instant | str,
        records: pa.Table,
        op: str = "upsert",
        write_token: str | None = None,
        prior: Iterable[WriteStat | dict[str, Any]] | None = None,
    ) -> list[WriteStat]:
        """Write `records` into files of `instant` (invisible until commit)."""
        self._refuse_if_hudi("a data write")
        with self._mutex:
            self.timeline.reload()
        prior_stats = [WriteStat.coerce(s) for s in prior or ()]
        return self._writer.write(
            _time_of(instant), records, op, write_token, prior_stats, self.schema
        )

    def open_appender(self, instant: Instant | str, write_token: str) -> BaseAppender:
        """A new file group of `instant` for COW inserts, written one row group per
        `write` and published by `close` (engine/table/appender.py); its write stat goes
        to `commit` like write_files' stats."""
        if self.config.table_type != "cow":
            raise EngineError("an appender writes base files: copy-on-write tables only")
        with self._mutex:  # the schema a commit since then may have taught
            self.timeline.reload()
        return BaseAppender(
            self.storage, self.markers, self.config, self.schema, _time_of(instant), write_token
        )

    @runs(Operation.COMMIT)
    def commit(
        self,
        instant: Instant | str,
        stats: Iterable[WriteStat | dict[str, Any]],
        metadata: dict[str, Any] | None = None,
        guard: Callable[[], None] | None = None,
    ) -> str:
        """Complete `instant` under the table lock; returns its completion time.

        OCC and the primary-key check run first, then `guard()` (fencing), then the
        completion time is generated and the completed instant file written."""
        return self._commit(instant, stats, metadata, guard, None)[0]

    @runs(Operation.COMMIT)
    def commit_and_start(
        self,
        instant: Instant | str,
        stats: Iterable[WriteStat | dict[str, Any]],
        metadata: dict[str, Any] | None = None,
        guard: Callable[[], None] | None = None,
        next_metadata: dict[str, Any] | None = None,
    ) -> tuple[str, Instant | None]:
        """`commit`, and in the same lock hold `start_instant` (with `next_metadata`): one
        TrueTime wait mints the completion time and the next requested time, 1 ms apart
        (engine/truetime.py: shared wait). The next instant is started only once the
        commit is durable; if the commit fails, neither is. Returns (completion, next);
        next is None if only starting it failed (the commit stands: start one as usual)."""
        return self._commit(instant, stats, metadata, guard, next_metadata or {})

    def _commit(
        self,
        instant: Instant | str,
        stats: Iterable[WriteStat | dict[str, Any]],
        metadata: dict[str, Any] | None,
        guard: Callable[[], None] | None,
        start_next: dict[str, Any] | None,
    ) -> tuple[str, Instant | None]:
        t = _time_of(instant)
        written = [WriteStat.coerce(s) for s in stats]
        metadata = dict(metadata or {})
        clash = sorted(RESERVED_KEYS & set(metadata))
        if clash:
            raise EngineError(f"commit metadata keys {clash} are reserved by the engine")
        effective, superseded = effective_stats(written, t)
        # Hudi's reconcile against markers, before the lock: the instant's files that this
        # commit does not list (failed attempts, superseded flushes, temp files) go first.
        self.markers.delete_unlisted(t, [s.file_name for s in effective])
        # Before the lock: the instant's own files (nobody else writes them; a rollback that
        # deletes them rolls the instant back first, which _committable sees under the lock,
        # so its error still comes first) and the schema.
        bad_files = file_problem(self.storage, effective)
        encoded = schema_text(self.storage, self.schema, effective) if bad_files is None else None
        pending, next_failed = None, False
        with self.locked() as held:
            self.timeline.reload()
            current = self._committable(t)
            if bad_files is not None:
                raise bad_files
            requested = self._requested_meta(current)
            baseline = requested.occ_baseline
            self._check_conflicts(t, baseline, effective)
            if guard is not None:
                guard()
            if start_next is None:
                generated = self.generator.generate_stamped(locked=True)
            else:
                generated, upcoming = self.generator.generate_pair(locked=True)
            completion = generated.time
            meta = CommitMetadata(
                stats=effective,
                operation=",".join(sorted({s.op for s in effective})),
                writer_id=self.writer_id,
                requested_seq=requested.requested_seq,
                completion_seq=generated.seq,
                occ_baseline=baseline,
                superseded=superseded,
                arrow_schema=encoded,
                avro_schema=avro_schema_of(encoded, table_name(self.storage)),
                fence=self.fence.token,  # the epoch / lock token this commit was made under
                extra=metadata,
            )
            done = self.timeline.complete(
                current.with_state(INFLIGHT), completion, meta, remove_pending_files=False
            )
            if start_next is not None:  # its OCC baseline is this completion
                try:
                    pending = self._begin(upcoming.time, upcoming.seq, None, start_next)
                except Exception:  # the completed file is the commit point: it stands
                    next_failed = True
        if next_failed:
            self._last_hold = None  # the next hold reads storage again
        self._after_commit(done, effective)
        if pending is None:
            return completion, None
        return completion, self._started_instant(pending, upcoming.timing, held.wait_ms)

    def _check_conflicts(self, t: str, baseline: str | None, stats: list[WriteStat]) -> None:
        """OCC and the primary-key check against the commits since `baseline`, each unless
        switched off; then the seam where both passed and no completion time exists yet."""
        if self.safety.occ:
            check_occ(self.catalog, t, baseline, stats)
        if self.safety.pk_check:
            check_unique_keys(self.catalog, self.config.key_field, t, baseline, stats)
        self.fence.seam(Seam.AFTER_CHECKS)

    def _after_commit(self, done: Instant, stats: list[WriteStat]) -> None:
        """After the lock: the completed file is the commit point, and leftover pending
        files are harmless (the completed state wins on load); so is a stale heartbeat."""
        t = done.requested_time
        self._started.pop(t, None)
        with contextlib.suppress(OSError):
            self.timeline.remove_pending(done)
        # A straggler's files, then the markers go (fenced: a zombie's stay, unread).
        with contextlib.suppress(OSError, FencedError):
            self.markers.finish(t, [s.file_name for s in stats])
        with contextlib.suppress(OSError):
            self.heartbeats.stop(t)

    def _committable(self, t: str) -> Instant:
        if self.timeline.is_rolled_back(t):
            raise InstantRolledBackError(t)
        current = self.timeline.get(t)
        if current is None:
            raise InstantStateError(f"instant {t} is not on the timeline")
        # put_if_absent also guards the completion transition: only a pending instant may
        # complete. Without it a second writer that picked the same time silently
        # overwrites the first one's completed instant.
        if current.is_completed and self.safety.put_if_absent:
            raise InstantStateError(
                f"instant {t} is already completed at {current.completion_time}; "
                "an instant is committed at most once"
            )
        return current

    def _requested_meta(self, current: Instant) -> CommitMetadata:
        """What the requested file says (OCC baseline, requested sequence): from memory for
        our own instants, else read once (an instant this process adopted)."""
        if current.requested_time in self._started:
            return CommitMetadata.from_dict(self._started[current.requested_time])
        return self.timeline.read_metadata(current)

    # -- rollback ------------------------------------------------------------------------

    def rollback(self, instant: Instant | str, force: bool = False) -> Instant | None:
        """Delete the instant's files (found by name), record a rollback instant, remove the
        instant. A completed instant is refused unless `force`. Returns the rollback instant
        (None if the instant was already rolled back)."""
        return rollback.rollback(self, _time_of(instant), force)

    def rollback_failed_writes(self) -> list[str]:
        """Roll back failed writes; returns the rolled-back requested times.

        Lazy (safety.lazy_rollback): pending instants whose heartbeat expired. Eager: every
        pending instant not started by this Table object, including other writers' live
        ones. Pending compactions are left to be re-run; interrupted rollbacks are finished."""
        return rollback.rollback_failed_writes(self)

    # -- compaction, archive -------------------------------------------------------------

    def schedule_compaction(self) -> Instant | None:
        """MOR: plan a compaction of every group with logs; its requested time starts new
        slices. None if there is nothing to compact."""
        return compaction.schedule(self)

    def run_compaction(self, instant: Instant | str) -> str:
        """Merge the planned slices into new base files and complete the compaction."""
        return compaction.run(self, _time_of(instant))

    @runs(Operation.ARCHIVE)
    def archive(self, keep: int = 30) -> int:
        """Move the oldest instants to the archived timeline, keeping the latest `keep`
        commits on the active one (engine/table/archival.py); returns how many moved."""
        return archival.archive(self, keep)

    # -- reads ---------------------------------------------------------------------------

    def snapshot(
        self,
        columns: list[str] | None = None,
        with_meta: bool = False,
        file_ids: Iterable[str] | None = None,
        leave_out: Collection[str] = (),
    ) -> pa.Table:
        """The latest committed state (of only some file groups with `file_ids`; without
        the log files `leave_out`: FileSystemView.without_logs)."""
        return self._read(self.view().without_logs(leave_out), columns, with_meta, file_ids)

    def as_of(
        self,
        completion_time: str,
        columns: list[str] | None = None,
        with_meta: bool = False,
        file_ids: Iterable[str] | None = None,
        leave_out: Collection[str] = (),
    ) -> pa.Table:
        """The state made of instants completed at or before `completion_time` (of only
        some file groups with `file_ids`: the pieces a distributed reader reads; without
        the log files `leave_out`: FileSystemView.without_logs)."""
        view = self.view(as_of=completion_time).without_logs(leave_out)
        return self._read(view, columns, with_meta, file_ids)

    def _read(
        self,
        view: FileSystemView,
        columns: list[str] | None,
        with_meta: bool,
        file_ids: Iterable[str] | None,
    ) -> pa.Table:
        key, schema, ordering = self.config.key_field, self.schema, self._event_time_ordering
        return read_view(self.catalog, view, key, schema, columns, with_meta, file_ids, ordering)

    @property
    def _event_time_ordering(self) -> str | None:
        """The ordering field a table Hudi wrote in EVENT_TIME_ORDERING merges by; None for
        the engine's own tables, whose later commit wins (COMMIT_TIME_ORDERING)."""
        if self.hudi_merge_mode != "EVENT_TIME_ORDERING":
            return None
        return self.config.ordering_field

    def file_ids(self, as_of: str | None = None) -> list[str]:
        return self.view(as_of).file_ids()

    def stored_rows(self, as_of: str | None = None) -> int:
        """Rows stored in the files a snapshot reads (Parquet footers, delete blocks' keys; an
        upper bound on the rows it returns): how big a full read would be."""
        view = self.view(as_of)
        total = 0
        for fid in view.file_ids():
            base, logs = view.latest(fid)
            for f in ([base] if base is not None else []) + logs:
                total += file_rows(self.storage, f.name)
        return total

    def incremental(
        self,
        begin_exclusive: str | None,
        end_inclusive: str | None = None,
        columns: list[str] | None = None,
        with_meta: bool = False,
        include_deletes: bool = False,
    ) -> pa.Table:
        """Rows written by data instants that completed in (begin, end], latest version per
        key. MOR delete markers appear only with include_deletes=True (then `_hoodie_is_deleted`
        is among the columns)."""
        self.timeline.reload()
        instants = [
            i
            for i in self.timeline.completed_in(begin_exclusive, end_inclusive)
            if i.action in DATA_ACTIONS
        ]
        return read_incremental(
            self.catalog,
            instants,
            self.config.key_field,
            self.schema,
            columns,
            with_meta or include_deletes,
            include_deletes,
            self._event_time_ordering,
        )

    def transaction(
        self, action: str | None = None, metadata: dict[str, Any] | None = None
    ) -> Transaction:
        """begin/write/commit/abort convenience; as a context manager it commits on success
        and rolls back on an exception."""
        return Transaction(self, action, metadata)


class _TimedLock:
    """`with table.locked() as held:` takes the table lock; held.wait_ms says how long."""

    def __init__(self, table: Table) -> None:
        self.table, self.wait_ms = table, 0.0

    def __enter__(self) -> _TimedLock:
        t0 = time.perf_counter()
        table, lock = self.table, self.table.lock
        lock.acquire(table.lock_timeout_s)
        self.wait_ms = (time.perf_counter() - t0) * 1000
        try:
            table.fence.open(lock.token, lock.fence_domain)  # this hold's fencing grant
        except BaseException:
            lock.release()
            raise
        # Nobody held the lock since this table's own last hold (ended cleanly): nothing
        # changed the timeline or the generation record but this table, which recorded its
        # changes, so neither is read again (engine/locks/base.py: hold, follows).
        follows = lock.follows
        fresh = follows is not None and follows == table._last_hold
        table._last_hold = None  # until this hold ends cleanly
        table.timeline.pin(fresh=fresh)
        table._truetime_store.hold_begins(fresh)
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        table = self.table
        table._truetime_store.trusted = False
        table.timeline.unpin()
        table.fence.end()
        if exc_type is None:  # a failed hold may have left storage and caches apart
            table._last_hold = table.lock.hold
        table.lock.release()
