"""The run history's event kinds, declared (docs/history.md documents each; its test holds
the two together and checks every kind the code records is declared here).

Writers record a kind as a string (the engine, which cannot import the harness, too);
readers filter by these constants. `required`: the keys the checks index, so an event
without them is unreadable evidence (harness.history.load_events).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Kind(StrEnum):
    RUN_START = "run_start"
    RUN_END = "run_end"
    BATCH = "batch"
    INSTANT_REQUEST = "instant_request"
    INSTANT_CREATED = "instant_created"
    FLUSH = "flush"
    ACK = "ack"
    ACK_DELAYED = "ack_delayed"
    COMMIT = "commit"
    COMMIT_FAILED = "commit_failed"
    ROLLBACK = "rollback"
    COMPACTION_SCHEDULED = "compaction_scheduled"
    COMPACTION = "compaction"
    COMPACTION_FAILED = "compaction_failed"
    CLEAN = "clean"
    FAILED_WRITES_ROLLED_BACK = "failed_writes_rolled_back"
    ARCHIVE = "archive"
    TABLE_SERVICE_FAILED = "table_service_failed"
    RECOVERY = "recovery"
    TXN = "txn"
    TXN_COMMIT = "txn_commit"
    TXN_ROWS = "txn_rows"
    READ = "read"
    READ_ERROR = "read_error"
    READ_OUT_OF_WINDOW = "read_out_of_window"
    FAULT = "fault"
    WRITER_CRASH_POINT = "writer_crash_point"
    COORDINATOR_CRASH_POINT = "coordinator_crash_point"
    FAULT_ARMED = "fault_armed"
    DRIVER_START = "driver_start"
    DRIVER_EXIT = "driver_exit"
    DRIVER_RESTART = "driver_restart"
    DRIVER_STOP = "driver_stop"
    DRIVER_FENCED = "driver_fenced"
    DRIVER_RESUMED = "driver_resumed"
    PAUSE_REACHED = "pause_reached"
    CUT_REACHED = "cut_reached"
    INSTANT_MODE_FORCED = "instant_mode_forced"


@dataclass(frozen=True)
class Event:
    fields: tuple[str, ...]  # besides t, kind and src (every event has those)
    required: tuple[str, ...] = ()  # of fields: what the checks index


def _event(fields: str, required: str = "") -> Event:
    return Event(tuple(fields.split()), tuple(required.split()))


EVENTS: dict[Kind, Event] = {
    Kind.RUN_START: _event("run_id scenario warmup_s duration_s checkpoint_interval_s"),
    Kind.RUN_END: _event("status error"),
    Kind.BATCH: _event(
        "batch_id start_offset end_offset rows t_start t_end", "batch_id start_offset end_offset"
    ),
    Kind.INSTANT_REQUEST: _event("checkpoint_id instant task latency_ms blocked_ms created"),
    Kind.INSTANT_CREATED: _event(
        "checkpoint_id writer instant truetime_sleep_ms lock_wait_ms minted_by_commit"
        " minted_ahead_of",
        "instant",
    ),
    Kind.FLUSH: _event("task attempt checkpoint_id instant rows bytes files last_batch"),
    Kind.ACK: _event("checkpoint_id action", "checkpoint_id action"),
    Kind.ACK_DELAYED: _event("checkpoint_id delay_s"),
    Kind.COMMIT: _event(
        "instant checkpoint_id requested completed rows files latency_ms"
        " max_event_time min_offset max_offset",
        "instant",
    ),
    Kind.COMMIT_FAILED: _event("instant checkpoint_id error"),
    Kind.ROLLBACK: _event("instant reason"),
    Kind.COMPACTION_SCHEDULED: _event("instant"),
    Kind.COMPACTION: _event("instant completed latency_ms"),
    Kind.COMPACTION_FAILED: _event("error fenced"),
    Kind.CLEAN: _event("instant completed earliest_retained files latency_ms"),
    Kind.FAILED_WRITES_ROLLED_BACK: _event("instants"),
    Kind.ARCHIVE: _event("instants keep"),
    Kind.TABLE_SERVICE_FAILED: _event("error fenced"),
    Kind.RECOVERY: _event("restored_checkpoint_id recommitted skipped rolled_back epoch"),
    Kind.TXN: _event("writer op instant outcome attempts latency_ms rows error"),
    Kind.TXN_COMMIT: _event("writer instant completed", "instant"),
    Kind.TXN_ROWS: _event("writer instant keys amounts", "writer instant keys amounts"),
    Kind.READ: _event(
        "reader read_kind as_of begin end read_at rows fingerprint instants files total accounts",
        "reader read_kind",
    ),
    Kind.READ_ERROR: _event("reader read_kind as_of begin end error", "reader error"),
    Kind.READ_OUT_OF_WINDOW: _event("reader read_kind as_of begin end error"),
    Kind.FAULT: _event("fault_kind label target start_s end_s applied evidence"),
    Kind.WRITER_CRASH_POINT: _event("label task attempt point pid batch_id instant"),
    Kind.COORDINATOR_CRASH_POINT: _event("label point pid checkpoint_id instant"),
    Kind.FAULT_ARMED: _event("label batch_id task"),
    Kind.DRIVER_START: _event("pid restored_batch spark_ui"),
    Kind.DRIVER_EXIT: _event("pid code"),
    Kind.DRIVER_RESTART: _event("pid restarts"),
    Kind.DRIVER_STOP: _event("status error"),
    Kind.DRIVER_FENCED: _event("batch_id epoch current_epoch pid"),
    Kind.DRIVER_RESUMED: _event("pid label"),
    Kind.PAUSE_REACHED: _event("label point token instant checkpoint_id"),
    Kind.CUT_REACHED: _event("label point instant checkpoint_id"),
    Kind.INSTANT_MODE_FORCED: _event("requested mode"),
}
