"""Streaming write path: coordinator (driver), writer tasks (executors), WriteMeta, state,
transports. See engine/README.md, section "Streaming protocol"."""

from engine.stream.coordinator import Coordinator
from engine.stream.recorder import ListRecorder, Recorder, null_recorder
from engine.stream.state import CheckpointStateStore, EpochStore, WriterStateStore
from engine.stream.write_meta import EventBuffer, EventBuffers, WriteMetaEvent
from engine.stream.writer import FAULT_POINTS, WriterTask

__all__ = [
    "FAULT_POINTS",
    "CheckpointStateStore",
    "Coordinator",
    "EpochStore",
    "EventBuffer",
    "EventBuffers",
    "ListRecorder",
    "Recorder",
    "WriteMetaEvent",
    "WriterStateStore",
    "WriterTask",
    "null_recorder",
]
