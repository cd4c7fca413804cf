"""Table: create/open, instant lifecycle (start, write, commit, rollback), reads. Their
steps live beside it: engine/table/instant_start.py and completion.py (an instant's start
and commit), lock_hold.py (a hold of the table lock), table_reads.py (the reads).

Layout under the table path:
  .hoodie/hoodie.properties      Hudi table properties (key=value) + the engine's config
  .hoodie/timeline/              active timeline (Hudi layout 2); history/: archived LSM
  .hoodie/.heartbeat/<instant>   writer heartbeats
  .hoodie/.lock                  FileLock lease (default lock provider)
  .hoodie/.truetime              last generated time and sequence number (all processes)
  <data files>                   base and log files (non-partitioned)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import pyarrow as pa

from engine.clock import Clock, SystemClock
from engine.config import Safety, TableConfig
from engine.errors import EngineError, ReadOnlyTableError, TableExistsError
from engine.locks.base import LockProvider, default_owner
from engine.locks.registry import LockSpec, build_lock
from engine.storage import Storage
from engine.table import archival, compaction, completion, instant_start, rollback
from engine.table.appender import BaseAppender
from engine.table.catalog import Catalog
from engine.table.data_files import key_type
from engine.table.fencing import Fence
from engine.table.file_cache import FileCache
from engine.table.heartbeat import HEARTBEAT_DIR, Heartbeats
from engine.table.lock_hold import LockHold
from engine.table.markers import Markers
from engine.table.merge import META_COLUMNS
from engine.table.operations import Operation, Seam, runs
from engine.table.properties import read_properties, write_properties
from engine.table.stats import WriteStat
from engine.table.table_reads import TableReads
from engine.table.transaction import Transaction
from engine.table.writer import FileWriter
from engine.timeline.active import TIMELINE_DIR, ActiveTimeline
from engine.timeline.archive import HISTORY_DIR
from engine.timeline.instant import Instant
from engine.timeline.sequence import StoredLastGenerated
from engine.truetime import InstantTimeGenerator, InstantTiming


def _time_of(instant: Instant | str) -> str:
    return instant if isinstance(instant, str) else instant.requested_time


class Table(TableReads):
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
        self.writer_id = writer_id or default_owner()
        self._declared_schema = schema
        self.hudi_merge_mode = None  # set by `open` for a table Apache Hudi wrote
        self._learned_schema = None
        self._fence_and_lock(lock, lock_spec, lock_timeout_s)
        self._timeline_and_catalog(cache_bytes)
        self.generator = InstantTimeGenerator(
            self.clock,
            self.lock,
            max_skew_ms,
            strict_monotonic=self.safety.strict_monotonic,
            wait=self.safety.truetime_wait,
            floor=lambda: self.timeline.reload().max_instant_time(),
            store=self.truetime_store,
            sleep=self._truetime_wait,
        )
        self._writing(heartbeat_interval_s, heartbeat_expiry_s, new_keys_by_bucket)
        self._started: dict[str, dict[str, Any]] = {}  # requested metadata of our instants
        self.last_hold: object | None = None  # the lock hold this table ended last, cleanly
        self._mutex = threading.RLock()
        self.last_instant_timing = InstantTiming(0.0, 0.0)
        self.timeline.reload()

    def _fence_and_lock(
        self, lock: LockProvider | None, lock_spec: LockSpec | None, lock_timeout_s: float
    ) -> None:
        # Timeline writes go through the fence (engine/table/fencing.py).
        self.truetime_store = StoredLastGenerated(self.storage)
        self.fence = Fence(
            self.storage, enabled=self.safety.fencing, claims=self.safety.put_if_absent
        )
        self.truetime_store.fence = self.fence
        # A lock we create (`lock_spec`'s provider, FileLock by default) is ours to close
        # (its lease renewal, its session); a waiter that takes over an expired lease
        # revokes its holder's fence grant.
        self._own_lock = None
        if lock is None:
            lock = self._own_lock = build_lock(
                lock_spec or LockSpec(), self.storage, self.writer_id, self.fence.revoke
            )
        self.lock: LockProvider = lock
        self.lock_timeout_s = lock_timeout_s

    def _timeline_and_catalog(self, cache_bytes: int) -> None:
        # Merge-on-read data instants are deltacommits: a completed commit is a compaction.
        self.timeline = ActiveTimeline(
            self.storage, self.safety, compaction_commits=self.config.table_type == "mor"
        )
        self.timeline.fence = self.timeline.archive.fence = self.fence
        self.fence.on_claimed = lambda t: rollback.release_abandoned_claim(self, t)
        # Delete blocks hold keys as strings: reads cast them back to the key's type.
        config = self.config
        self.catalog = Catalog(
            self.storage,
            self.timeline,
            self.safety,
            FileCache(cache_bytes),
            key_type=lambda: (config.key_field, key_type(self.schema, config.key_field)),
        )

    def _writing(
        self, heartbeat_interval_s: float, heartbeat_expiry_s: float | None, by_bucket: bool
    ) -> None:
        """The heartbeats, markers and file writer of the instants this handle writes."""
        self.heartbeats = Heartbeats(self.storage, self.clock, heartbeat_interval_s)
        self.heartbeat_expiry_s = heartbeat_expiry_s or 2 * heartbeat_interval_s or 60.0
        self.markers = Markers(self.storage, enabled=self.safety.markers, delete=self.fence.delete)
        self._writer = FileWriter(
            self.storage, self.catalog, self.config, self.writer_id, self.markers
        )
        # A stream's writer tasks: new dynamic-index keys go where its routing sent them.
        self._writer.new_keys_by_bucket = by_bucket

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
            pending = instant_start.begin(self, generated.time, generated.seq, action, metadata)
        return self._started_instant(pending, generated.timing, held.wait_ms)

    def _started_instant(
        self, pending: tuple[Instant, dict[str, Any]], timing: InstantTiming, lock_wait_ms: float
    ) -> Instant:
        inflight, meta = pending
        timing = InstantTiming(timing.lock_wait_ms + lock_wait_ms, timing.truetime_sleep_ms)
        started = instant_start.after_lock(self, inflight, timing)
        self._started[started.requested_time] = meta
        self.last_instant_timing = timing
        return started

    def locked(self) -> LockHold:
        """The table lock, held for a `with` block (the timeline pinned, this hold's fencing
        grant open); `held.wait_ms` says how long it took to get. Every change of the
        table takes it, so a table Apache Hudi wrote refuses them here."""
        self._refuse_if_hudi("a change of the table")
        return LockHold(self)

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
        """Before, under and after the table lock (engine/table/completion.py); with
        `start_next`, the next instant begins in the same hold, once the commit is durable."""
        t = _time_of(instant)
        listed = completion.before_lock(self, t, stats, metadata)
        pending, next_failed, pair = None, False, start_next is not None
        with self.locked() as held:
            done, upcoming = completion.under_lock(self, t, listed, guard, self._started, pair)
            if upcoming is not None:  # its OCC baseline is this completion
                try:
                    pending = instant_start.begin(
                        self, upcoming.time, upcoming.seq, None, start_next
                    )
                except Exception:  # the completed file is the commit point: it stands
                    next_failed = True
        if next_failed:
            self.last_hold = None  # the next hold reads storage again
        self._started.pop(t, None)
        completion.after_lock(self, done, listed.stats)
        if pending is None or upcoming is None:
            return done.completed_at, None
        return done.completed_at, self._started_instant(pending, upcoming.timing, held.wait_ms)

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

    # -- transactions --------------------------------------------------------------------

    def transaction(
        self, action: str | None = None, metadata: dict[str, Any] | None = None
    ) -> Transaction:
        """begin/write/commit/abort convenience; as a context manager it commits on success
        and rolls back on an exception."""
        return Transaction(self, action, metadata)
