"""Errors of the streaming write path (all are engine errors)."""

from __future__ import annotations

from engine.errors import EngineError, FencedError


class StreamError(EngineError):
    """Base class of the errors below."""


class InstantTimeoutError(StreamError):
    """Blocking mode: earlier instants did not commit within commit_ack_timeout_s, or an
    instant request did not become READY within the writer's deadline."""


class UnexpectedEventError(StreamError):
    """An event names an instant the coordinator has not created (Hudi #5690)."""


class CommitFailedError(StreamError):
    """A buffered instant could not be committed; the coordinator stops."""


class RecoveryError(StreamError):
    """Restoring coordinator state found something it must not commit."""


class TransportError(StreamError):
    """The coordinator could not be reached within the retries and timeouts."""


__all__ = [
    "CommitFailedError",
    "EngineError",
    "FencedError",
    "InstantTimeoutError",
    "RecoveryError",
    "StreamError",
    "TransportError",
    "UnexpectedEventError",
]
