"""Clocks (with run-time adjustable skew) and instant-time formatting."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from engine.errors import InvalidInstantTimeError


class Clock(Protocol):
    def now_ms(self) -> int: ...


class SystemClock:
    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000


class ManualClock:
    """A clock that only moves when told to (tests, fixed-clock collisions)."""

    def __init__(self, start_ms: int) -> None:
        self._ms = start_ms
        self._lock = threading.Lock()

    def now_ms(self) -> int:
        with self._lock:
            return self._ms

    def set(self, ms: int) -> None:
        with self._lock:
            self._ms = ms

    def advance(self, ms: int) -> None:
        with self._lock:
            self._ms += ms


@dataclass(frozen=True)
class SkewedRead:
    """The first read of an AdjustableClock after its skew was set: proof that the skew
    reached a reader (instant generation, lock lease, heartbeat), not only its setter."""

    adjustment: int  # the AdjustableClock.adjustments count this read follows
    base_ms: int  # the base (true) clock at the read
    read_ms: int  # the skewed value the reader got
    reader: str  # the reading thread's name

    @property
    def skew_ms(self) -> int:
        return self.read_ms - self.base_ms


class AdjustableClock:
    """Wraps a base clock with offset, drift and jumps that can change while it is in use.

    Drift accumulates from the moment it is set: changing the rate folds the drift so far
    into the offset, so the clock never jumps when only the rate changes.

    Each adjustment returns its number; the first `now_ms()` after it is passed to
    `on_skewed_read` (outside the clock's lock), so a fault injector can record the skew a
    reader actually got. `skew_ms` is a peek and never counts as that read.
    """

    def __init__(
        self,
        base: Clock | None = None,
        on_skewed_read: Callable[[SkewedRead], None] | None = None,
    ) -> None:
        self._base = base or SystemClock()
        self._lock = threading.Lock()
        self._offset_ms = 0.0
        self._drift_ppm = 0.0
        self._drift_anchor_ms = 0
        self.adjustments = 0
        self._armed = False  # the next read is the first since an adjustment
        self.on_skewed_read = on_skewed_read

    def now_ms(self) -> int:
        with self._lock:
            base = self._base.now_ms()
            value = int(base + self._offset_ms + self._drift_since(base))
            first, self._armed = self._armed, False
            adjustment = self.adjustments
        listener = self.on_skewed_read
        if first and listener is not None:
            listener(SkewedRead(adjustment, base, value, threading.current_thread().name))
        return value

    def _drift_since(self, base_ms: int) -> float:
        return (base_ms - self._drift_anchor_ms) * self._drift_ppm / 1e6

    def _adjusted(self) -> int:
        """Count an adjustment and arm the first-read note (call under _lock)."""
        self.adjustments += 1
        self._armed = True
        return self.adjustments

    @property
    def skew_ms(self) -> float:
        """Current difference to the base clock."""
        with self._lock:
            return self._offset_ms + self._drift_since(self._base.now_ms())

    def set_offset_ms(self, offset_ms: float) -> int:
        """Set the constant part of the skew (drift accumulated so far is kept)."""
        with self._lock:
            self._offset_ms = float(offset_ms)
            return self._adjusted()

    def set_drift_ppm(self, ppm: float) -> int:
        with self._lock:
            base = self._base.now_ms()
            self._offset_ms += self._drift_since(base)
            self._drift_anchor_ms, self._drift_ppm = base, float(ppm)
            return self._adjusted()

    def jump_ms(self, delta_ms: float) -> int:
        with self._lock:
            self._offset_ms += delta_ms
            return self._adjusted()

    def reset(self) -> None:
        """Back to the base clock; a read after this shows no skew, so none is noted."""
        with self._lock:
            self._offset_ms, self._drift_ppm = 0.0, 0.0
            self._armed = False


_INSTANT_RE = re.compile(r"^\d{17}$")
# 17 digits need a four-digit year.
_MIN_MS = -30610224000000  # 1000-01-01T00:00:00Z
_MAX_MS = 253402300799999  # 9999-12-31T23:59:59.999Z


def format_instant(ms: int) -> str:
    """Milliseconds since the epoch -> 'yyyyMMddHHmmssSSS' (UTC)."""
    if not isinstance(ms, int) or isinstance(ms, bool) or not _MIN_MS <= ms <= _MAX_MS:
        raise InvalidInstantTimeError(f"cannot format {ms!r} as a 17-digit instant time")
    sec, milli = divmod(ms, 1000)
    return datetime.fromtimestamp(sec, tz=UTC).strftime("%Y%m%d%H%M%S") + f"{milli:03d}"


def parse_instant(text: str) -> int:
    """'yyyyMMddHHmmssSSS' (UTC) -> milliseconds since the epoch."""
    if not isinstance(text, str) or not _INSTANT_RE.match(text):
        raise InvalidInstantTimeError(f"not a 17-digit instant time yyyyMMddHHmmssSSS: {text!r}")
    try:
        dt = datetime.strptime(text[:14], "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    except ValueError as e:
        raise InvalidInstantTimeError(f"not a valid instant time {text!r}: {e}") from None
    return int(dt.timestamp()) * 1000 + int(text[14:])
