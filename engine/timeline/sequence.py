"""The generation sequence on storage: the shared store record and the metadata keys
with which instant files record the sequence number of each time they carry.

`.hoodie/.truetime` holds `{"time": <largest generated time>, "seq": <last number>}`
(a bare time is the record of a table from before sequences: its count is unknown).
Requested files carry `requested_seq`; completed files carry `requested_seq` and
`completion_seq`; a rollback also carries the (time, seq) pairs of the instant it
removed (`rollback.generated`), so no generated time leaves the timeline unnumbered
(fields of `engine.timeline.commit_metadata.CommitMetadata`).
"""

from __future__ import annotations

import json
from typing import Any

from engine.clock import parse_instant
from engine.errors import CorruptInstantError, InvalidInstantTimeError
from engine.storage import Storage
from engine.timeline.commit_metadata import CommitMetadata
from engine.timeline.instant import Instant
from engine.truetime import LastGenerated

TRUETIME_FILE = ".hoodie/.truetime"
# Keys of the flat (dict) form of CommitMetadata that carry sequence numbers.
REQUESTED_SEQ = "requested_seq"
COMPLETION_SEQ = "completion_seq"


def decode_record(data: bytes, file: str) -> LastGenerated:
    """The store's record; CorruptInstantError naming `file` if it is not one."""
    text = data.decode(errors="replace").strip()
    try:
        if text.isdigit():  # a table from before sequences: the time alone
            parse_instant(text)
            return LastGenerated(text, None)
        record = json.loads(text)
        seq = record["seq"]
        parse_instant(record["time"])
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 1:
            raise ValueError(f"seq {seq!r} is not a positive integer")
        return LastGenerated(record["time"], seq)
    except (ValueError, KeyError, TypeError, InvalidInstantTimeError) as e:
        raise CorruptInstantError(file, f"not a generation record ({e})") from None


class StoredLastGenerated:
    """The last generation in `.hoodie/.truetime` (read/written under the table lock).

    `trusted` (set by the table for a lock hold that directly follows its own previous
    hold: nobody else held the lock in between) answers `load` from the record this
    handle last read or wrote, without a read."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage
        self.trusted = False
        # The table's Fence (engine/table/fencing.py): a holder that was taken over must
        # not move the record back or hand out a number its successor used.
        self.fence: Any = None
        self._known: LastGenerated | None = None

    def hold_begins(self, fresh: bool) -> None:
        """A lock hold begins. Fresh (it directly follows this table's own last hold): the
        record this handle knows is the current one. Not fresh: someone else may have
        written it since, so what this handle knows is forgotten, not only distrusted for
        this hold: a hold that generates nothing (an archival) would otherwise leave the
        stale record to be trusted by the fresh hold after it."""
        self.trusted = fresh
        if not fresh:
            self._known = None

    def load(self) -> LastGenerated | None:
        if self.trusted and self._known is not None:
            return self._known
        try:
            data = self.storage.read_bytes(TRUETIME_FILE)
        except FileNotFoundError:
            return None
        self._known = decode_record(data, self.storage.full_path(TRUETIME_FILE))
        return self._known

    def save(self, last: LastGenerated) -> None:
        record = {"time": last.time, "seq": last.seq}
        self._known = None  # unknown until the write is known to have landed
        data = json.dumps(record).encode()
        if self.fence is not None:  # fenced in a lock hold: the same one storage operation
            self.fence.put(TRUETIME_FILE, data, exclusive=False)
        else:
            self.storage.write_bytes(TRUETIME_FILE, data)
        self._known = last


def seq_of(value: Any) -> int | None:
    """A recorded sequence number, or None if absent or malformed (older files)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def generated_times(instant: Instant, metadata: CommitMetadata | None) -> list[dict[str, Any]]:
    """The generations an instant's metadata records, [{kind, time, seq}]: its requested
    and completion times, and for a rollback those of the instant it removed. seq is None
    where nothing (readable) was recorded (`metadata` None: the file could not be read)."""
    meta = metadata or CommitMetadata()
    out = [{"kind": "requested", "time": instant.requested_time, "seq": seq_of(meta.requested_seq)}]
    if instant.completion_time is not None:
        seq = seq_of(meta.completion_seq)
        out.append({"kind": "completion", "time": instant.completion_time, "seq": seq})
    removed = meta.rollback.generated if meta.rollback is not None else None
    if isinstance(removed, list):
        out += [
            {"kind": g.get("kind"), "time": g["time"], "seq": seq_of(g.get("seq"))}
            for g in removed
            if isinstance(g, dict) and isinstance(g.get("time"), str)
        ]
    return out
