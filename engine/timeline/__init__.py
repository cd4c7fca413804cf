"""Instants, commit metadata, the active timeline and the archived (LSM) timeline."""

from engine.timeline.active import ActiveTimeline
from engine.timeline.archive import ArchivedTimeline
from engine.timeline.commit_metadata import CommitMetadata, RollbackRecord
from engine.timeline.instant import Instant, parse_file_name

__all__ = [
    "ActiveTimeline",
    "ArchivedTimeline",
    "CommitMetadata",
    "Instant",
    "RollbackRecord",
    "parse_file_name",
]
