"""The narrow interface of a table handle that the table's own operations use (rollback,
compaction, cleaning, an instant's start and commit: engine/table/rollback.py,
compaction.py, cleaning.py, instant_start.py, completion.py): its parts and `locked()`,
the table lock held. Nothing private of Table; Table satisfies it."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import pyarrow as pa

    from engine.config import Safety, TableConfig
    from engine.layout.file_names import DataFile
    from engine.storage import Storage
    from engine.table.catalog import Catalog
    from engine.table.fencing import Fence
    from engine.table.heartbeat import Heartbeats
    from engine.table.markers import Markers
    from engine.timeline.active import ActiveTimeline
    from engine.truetime import InstantTimeGenerator


class TableOps(Protocol):
    config: TableConfig
    safety: Safety
    storage: Storage
    writer_id: str
    timeline: ActiveTimeline
    catalog: Catalog
    markers: Markers
    fence: Fence  # timeline writes and data-file deletes go through it
    heartbeats: Heartbeats
    heartbeat_expiry_s: float
    generator: InstantTimeGenerator  # instant times; `locked=True` inside `locked()`

    @property
    def schema(self) -> pa.Schema | None: ...

    def reload(self) -> TableOps: ...

    def data_files(self) -> list[DataFile]: ...

    def locked(self) -> AbstractContextManager[object]:
        """The table lock, held for the `with` block (timeline pinned, fencing grant open)."""
        ...
