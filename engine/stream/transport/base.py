"""The writer's view of the coordinator, independent of the transport."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from engine.stream.backoff import backoff_delays
from engine.stream.errors import InstantTimeoutError, StreamError
from engine.stream.write_meta import WriteMetaEvent


@dataclass(frozen=True)
class InstantGrant:
    instant: str
    created: bool  # this task's request made the coordinator create the instant
    blocked_ms: float  # time the coordinator waited for earlier commits (blocking mode)
    latency_ms: float  # request -> READY, as the writer saw it
    polls: int


class CoordinatorClient(Protocol):
    def request_instant(self, checkpoint_id: int, task_id: int, deadline_s: float) -> InstantGrant:
        """The instant for ``checkpoint_id``; polls until READY or ``deadline_s`` passes."""
        ...

    def send_event(self, event: WriteMetaEvent) -> None:
        """Deliver an event; raises if the coordinator rejected it."""
        ...


def poll_instant(
    ask: Callable[[], dict[str, Any]], checkpoint_id: int, deadline_s: float
) -> InstantGrant:
    """Ask until READY (Hudi #19902): each ask returns within the RPC timeout, PENDING
    answers are retried with jittered backoff, all within one overall deadline."""
    start = time.monotonic()
    created = False
    polls = 0
    delays = backoff_delays(start + deadline_s)
    while True:
        reply = ask()
        polls += 1
        created = created or bool(reply.get("created"))
        status = reply["status"]
        if status == "READY":
            return InstantGrant(
                instant=reply["instant"],
                created=created,
                blocked_ms=float(reply.get("blocked_ms", 0.0)),
                latency_ms=(time.monotonic() - start) * 1000,
                polls=polls,
            )
        if status != "PENDING":
            raise StreamError(f"instant request for checkpoint {checkpoint_id}: {reply['error']}")
        delay = next(delays, None)
        if delay is None:
            raise InstantTimeoutError(
                f"instant for checkpoint {checkpoint_id} not ready within {deadline_s}s "
                f"({polls} polls)"
            )
        time.sleep(delay)


def raise_for_reply(reply: dict[str, Any], what: str) -> None:
    if reply.get("status") != "OK":
        raise StreamError(f"{what}: {reply.get('error')}")
