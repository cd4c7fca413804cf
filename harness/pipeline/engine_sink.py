"""Driver side of the engine sink: the coordinator, its RPC server, and checkpoint ACKs."""

from __future__ import annotations

import functools
import os
import threading
import time
from concurrent.futures import Future
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from engine.config import Safety
from engine.locks.registry import LockSpec
from engine.locks.service_rpc import write_service_endpoint
from engine.stream.coordinator import Coordinator
from engine.stream.state import CheckpointStateStore, EpochStore
from engine.stream.table_port import serve_table_lock
from engine.stream.transport.server import CoordinatorServer
from engine.table import Table
from harness.faults.driver_faults import DriverFaults
from harness.faults.kinds import STORAGE_KINDS, FaultKind
from harness.faults.storage import StorageFaults
from harness.history import HistoryWriter
from harness.pipeline.compaction import CompactionService
from harness.pipeline.config import FENCED_EXIT, DriverConfig
from harness.pipeline.engine_task import TaskConfig, write_with_engine
from harness.pipeline.raw_sink import TASK_RESULT_SCHEMA
from harness.pipeline.routing import RouteConfig, needs_routing, route_by_file_group, route_values
from harness.pipeline.table_services import TableServices

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

COORDINATOR_STATE_DIR = ".hoodie/.stream/coordinator"
WRITER_STATE_DIR = ".hoodie/.stream/writers"
DRAIN_TIMEOUT_S = 60.0


class CommitTally:
    """The coordinator's recorder: writes the history and keeps the live totals."""

    def __init__(self, history: HistoryWriter) -> None:
        self.history = history
        self.rows_committed = 0
        self.committed_offset = 0
        self._lock = threading.Lock()

    def __call__(self, kind: str, fields: dict[str, Any]) -> None:
        if kind == "commit":
            with self._lock:
                self.rows_committed += int(fields.get("rows") or 0)
                top = fields.get("max_offset")
                if top is not None:
                    self.committed_offset = max(self.committed_offset, int(top) + 1)
        self.history(kind, fields)


def _open_table(
    cfg: DriverConfig,
    history: HistoryWriter,
    faults: DriverFaults,
    safety: Safety,
    lock_spec: LockSpec,
) -> Table:
    """The coordinator's table handle, under the run's faults."""
    table = Table.open(
        cfg.table_path,
        clock=faults.coordinator_clock,
        safety=safety,
        max_skew_ms=cfg.max_skew_ms,
        writer_id="coordinator",
        lock_spec=lock_spec,
    )
    table.fence.hooks.append(faults.table_hook)  # pauses / crashes at table seams
    StorageFaults(
        [o for o in faults.occ if o.kind != FaultKind.TORN_FILE],
        faults.clock,
        history,
        faults.fired,
        cfg.storage_latency_ms,
    ).install(table.storage)
    return table


def _new_coordinator(
    table: Table,
    cfg: DriverConfig,
    safety: Safety,
    tally: CommitTally,
    epochs: EpochStore,
    faults: DriverFaults,
) -> Coordinator:
    return Coordinator(
        table,
        parallelism=cfg.writers,
        mode=cfg.instant_mode,
        operation=cfg.op,
        safety=safety,
        commit_ack_timeout_s=cfg.commit_ack_timeout_s,
        recorder=tally,
        state_store=CheckpointStateStore(table.storage, COORDINATOR_STATE_DIR),
        epoch_store=epochs,
        fault_hook=faults.coordinator_hook,
        shared_wait=cfg.shared_wait,
    )


def _start_compaction(
    table: Table, cfg: DriverConfig, history: HistoryWriter
) -> CompactionService | None:
    """The compaction service shares the coordinator's table handle (clock, lock, faults)."""
    if cfg.compaction_every_s > 0:
        compaction = CompactionService(table, cfg.compaction_every_s, history)
        compaction.start()
        return compaction
    return None


def _start_archival_and_cleaning(
    table: Table, cfg: DriverConfig, history: HistoryWriter
) -> TableServices | None:
    """Archival and cleaning, on the coordinator's table handle too."""
    if cfg.archive_keep > 0 or cfg.clean_retain_commits > 0:
        services = TableServices(
            table,
            cfg.checkpoint_interval_s,
            history,
            archive_keep=cfg.archive_keep,
            clean_retain_commits=cfg.clean_retain_commits,
        )
        services.start()
        return services
    return None


class EngineSink:
    def __init__(
        self, cfg: DriverConfig, history: HistoryWriter, restored: int | None, faults: DriverFaults
    ) -> None:
        self.cfg = cfg
        self.history = history
        self.faults = faults
        safety = Safety(**cfg.safety)
        lock_spec = LockSpec(**cfg.lock) if cfg.lock else LockSpec()
        self.table = _open_table(cfg, history, faults, safety, lock_spec)
        self.tally = CommitTally(history)
        self.epochs = EpochStore(self.table.storage)
        self.fencing = safety.fencing
        self.coordinator = _new_coordinator(
            self.table, cfg, safety, self.tally, self.epochs, faults
        )
        # engine.lock.provider service: this coordinator serves the table lock (its own table
        # locks through it in-process, the other writers over RPC), with tokens that name
        # its epoch, so the next coordinator's epoch seals every hold it granted.
        self.lock_service = (
            serve_table_lock(self.table, self.coordinator.epoch, lock_spec.lease_s)
            if lock_spec.provider == "service"
            else None
        )
        self._restore_pending = restored is not None
        if restored is not None:
            self.coordinator.restore(restored)
        self.compaction = _start_compaction(self.table, cfg, history)
        self.services = _start_archival_and_cleaning(self.table, cfg, history)
        self.server = CoordinatorServer(
            self.coordinator, host=cfg.rpc_host, secret=cfg.secret, lock_service=self.lock_service
        )
        self.endpoint = self.server.start()
        if self.lock_service is not None:  # where the other writers find the lock service
            write_service_endpoint(str(lock_spec.endpoint), self.endpoint)
        # Routing by file group: needed unless each write makes its own groups (COW insert).
        config = self.table.config
        self._routing = needs_routing(config.table_type, cfg.op)
        self._route_values: list[int] | None = None
        # The dynamic index's snapshot is read as of the last completion (its own handle:
        # the coordinator's table is busy on its threads).
        self._index_table = (
            Table.open(cfg.table_path, writer_id="router")
            if self._routing and config.index == "dynamic"
            else None
        )
        self._acks: list[Any] = []

    def _exit_if_fenced(self, batch_id: int) -> None:
        """A driver whose coordinator lost its epoch (a resumed zombie) must not let Spark
        record another batch: the batch's instant can no longer be committed by it, and
        the new driver would then never process it. Fencing covers the query too."""
        if self.fencing and self.epochs.current() > self.coordinator.epoch:
            self.history.record(
                "driver_fenced",
                batch_id=batch_id,
                epoch=self.coordinator.epoch,
                current_epoch=self.epochs.current(),
                pid=os.getpid(),
            )
            os._exit(FENCED_EXIT)

    def process_batch(self, df: DataFrame, batch_id: int) -> None:
        self._exit_if_fenced(batch_id)
        # The coordinator snapshots before the writers do (FLINK-16986); the writers do not
        # wait for it, but Spark may record the batch (its checkpoint) only once it is done.
        snapshot = self.coordinator.snapshot_async(batch_id)
        # This batch's instant, without waiting (normally made already: see _notify).
        self.coordinator.request_instant(batch_id - 1, -1, 0.0)
        crash_points = self.faults.crash_points(batch_id)
        task_cfg = TaskConfig(
            batch_id=batch_id,
            checkpoint_id=batch_id - 1,
            restored=self._restore_pending,
            table_path=self.cfg.table_path,
            state_dir=WRITER_STATE_DIR,
            history_dir=self.cfg.history_dir,
            endpoint=asdict(self.endpoint),
            op=self.cfg.op,
            write_batch_rows=self.cfg.write_batch_rows,
            safety=self.cfg.safety,
            t0=self.faults.clock.start(),  # fixed already by the source's first offset
            crash_points=crash_points,
            storage_faults=[o.to_dict() for o in self.faults.occ if o.kind in STORAGE_KINDS],
            storage_latency_ms=self.cfg.storage_latency_ms,
            fired_dir=self.cfg.fired_dir,
        )
        fn = functools.partial(write_with_engine, cfg=task_cfg.to_dict())
        if self._routing:
            df = route_by_file_group(df, self._route_config(df))
        df.mapInArrow(fn, TASK_RESULT_SCHEMA).collect()
        self.faults.batch_finished(crash_points)
        snapshot.result()
        self._exit_if_fenced(batch_id)
        self._restore_pending = False

    def _route_config(self, df: DataFrame) -> RouteConfig:
        if self._route_values is None:
            self._route_values = route_values(df.sparkSession, self.cfg.writers)
        config = self.table.config
        as_of = None
        if self._index_table is not None:
            as_of = self._index_table.timeline.reload().last_completion_time()
        return RouteConfig(
            table_path=self.cfg.table_path,
            key_field=config.key_field,
            file_groups=config.file_groups,
            index=config.index,
            op=self.cfg.op,
            tasks=self.cfg.writers,
            route_values=self._route_values,
            as_of=as_of,
        )

    def checkpoint_complete(self, batch_id: int, info: dict) -> None:
        self.faults.deliver_ack(batch_id, self._notify)

    def _notify(self, batch_id: int) -> Future[list[str] | None]:
        ack = self.coordinator.notify_checkpoint_complete(batch_id)
        self._acks.append(ack)
        # Make the instant that batch_id + 2 writes once this ACK's commits are done:
        # creation and commit both hold the table lock through a TrueTime wait, so in
        # async mode a creation racing the commit would delay it (and the rows' freshness)
        # by a whole creation. Made now, it is ready long before that batch starts.
        ack.add_done_callback(lambda done: self._prefetch(done, batch_id + 1))
        return ack  # the ACK faults record what the coordinator did with it

    def _prefetch(self, ack: Any, checkpoint_id: int) -> None:
        if ack.cancelled() or ack.exception() is not None:
            return
        # Only the instant wanted: the coordinator mints in checkpoint order
        # (safety.checkpoint_ordered_instants), so if the next batch has not asked for its
        # own yet (an idle source, a dropped ACK before this one), that one is minted
        # first. The driver does not order them itself, or the switch would show nothing.
        self.coordinator.request_instant(checkpoint_id, -1, 0.0)

    def settled(self) -> bool:
        """Safe to stop: the writers re-sent any restored WriteMeta (a batch ran since the
        restart), every ACK delivered so far has been handled, and no instant is left that
        a later ACK would commit (one that failed to commit while its tasks had not all
        reported; an instant that nothing will commit, as without subsume_acks, is no
        reason to wait)."""
        if self._restore_pending or not all(ack.done() for ack in self._acks):
            return False
        return not self.coordinator.status()["overdue"]

    def status(self) -> dict:
        return {
            "pending_instants": self.coordinator.pending_instants(),
            "rows_committed": self.tally.rows_committed,
            "committed_offset": self.tally.committed_offset,
        }

    def service_error(self) -> BaseException | None:
        """The error of the first table service (compaction, clean, archival) that raised."""
        services = (self.compaction, self.services)
        return next((s.error for s in services if s is not None and s.error is not None), None)

    def close(self) -> None:
        deadline = time.time() + DRAIN_TIMEOUT_S
        try:
            for ack in self._acks:
                ack.result(timeout=max(deadline - time.time(), 0.1))
        finally:
            if self.compaction is not None:
                self.compaction.stop()
            if self.services is not None:
                self.services.stop()
            self.server.close()
            self.coordinator.close()
            self.table.close()
            if self._index_table is not None:
                self._index_table.close()
