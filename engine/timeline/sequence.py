"""The generation sequence on storage: the shared store record and the metadata keys
with which instant files record the sequence number of each time they carry.

`.hoodie/.truetime` holds `{"time": <largest generated time>, "seq": <last number>}`
(a bare time is the record of a table from before sequences: its count is unknown).
Requested files carry `requested_seq`; completed files carry `requested_seq` and
`completion_seq`; a rollback also carries the (time, seq) pairs of the instant it
removed (`rolled_back_generated`), so no generated time leaves the timeline unnumbered.
"""

from __future__ import annotations

import json
from typing import Any

from engine.clock import parse_instant
from engine.errors import CorruptInstantError, InvalidInstantTimeError
from engine.storage import Storage
from engine.timeline.instant import Instant
from engine.truetime import LastGenerated

TRUETIME_FILE = ".hoodie/.truetime"
REQUESTED_SEQ = "requested_seq"
COMPLETION_SEQ = "completion_seq"
ROLLED_BACK_GENERATED = "rolled_back_generated"
KEYS = frozenset({REQUESTED_SEQ, COMPLETION_SEQ, ROLLED_BACK_GENERATED})


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
        self._known: LastGenerated | None = None

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
        self.storage.write_bytes(TRUETIME_FILE, json.dumps(record).encode())
        self._known = last


def seq_of(metadata: dict[str, Any], key: str) -> int | None:
    """A recorded sequence number, or None if absent or malformed (older files)."""
    value = metadata.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def generated_times(instant: Instant, metadata: dict[str, Any]) -> list[dict[str, Any]]:
    """The generations an instant's metadata records, [{kind, time, seq}]: its requested
    and completion times, and for a rollback those of the instant it removed. seq is None
    where nothing (readable) was recorded."""
    out = [
        {
            "kind": "requested",
            "time": instant.requested_time,
            "seq": seq_of(metadata, REQUESTED_SEQ),
        }
    ]
    if instant.completion_time is not None:
        seq = seq_of(metadata, COMPLETION_SEQ)
        out.append({"kind": "completion", "time": instant.completion_time, "seq": seq})
    removed = metadata.get(ROLLED_BACK_GENERATED)
    if isinstance(removed, list):
        out += [
            {"kind": g.get("kind"), "time": g["time"], "seq": seq_of(g, "seq")}
            for g in removed
            if isinstance(g, dict) and isinstance(g.get("time"), str)
        ]
    return out
