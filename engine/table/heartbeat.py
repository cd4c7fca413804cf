"""Writer heartbeats: `.hoodie/.heartbeat/<instant>` holds the writer's clock (ms) at its
last beat. Live writers refresh theirs from a daemon thread; lazy failed-write cleaning
rolls back pending instants whose heartbeat expired."""

from __future__ import annotations

import contextlib
import threading

from engine.clock import Clock, parse_instant
from engine.storage import Storage

HEARTBEAT_DIR = ".hoodie/.heartbeat"


class Heartbeats:
    def __init__(self, storage: Storage, clock: Clock, interval_s: float) -> None:
        self.storage, self.clock, self.interval_s = storage, clock, interval_s
        self._live: set[str] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    @property
    def live(self) -> set[str]:
        with self._lock:
            return set(self._live)

    def beat(self, instant: str) -> None:
        self.storage.write_bytes(f"{HEARTBEAT_DIR}/{instant}", str(self.clock.now_ms()).encode())

    def start(self, instant: str) -> None:
        """Beat now and keep beating until stop(instant)."""
        self.beat(instant)
        with self._lock:
            self._live.add(instant)
            if self._thread is None and self.interval_s > 0:
                self._thread = threading.Thread(target=self._run, daemon=True, name="heartbeat")
                self._thread.start()

    def stop(self, instant: str, delete: bool = True) -> None:
        # Under the lock, so a beat in flight cannot recreate the file after the delete.
        with self._lock:
            self._live.discard(instant)
            if delete:
                self.storage.delete(f"{HEARTBEAT_DIR}/{instant}", missing_ok=True)

    def close(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            for instant in self.live:
                with self._lock:
                    if instant not in self._live:  # stopped since the snapshot
                        continue
                    # A missed beat only risks a later lazy rollback.
                    with contextlib.suppress(Exception):
                        self.beat(instant)

    def last_beat_ms(self, instant: str) -> int | None:
        try:
            return int(self.storage.read_bytes(f"{HEARTBEAT_DIR}/{instant}").decode())
        except (FileNotFoundError, ValueError):
            return None

    def is_expired(self, instant: str, expiry_s: float) -> bool:
        """No beat within expiry_s (an instant without any heartbeat file counts from its
        requested time, so a writer that just created it is not killed)."""
        last = self.last_beat_ms(instant)
        if last is None:
            last = parse_instant(instant)
        return self.clock.now_ms() - last > expiry_s * 1000
