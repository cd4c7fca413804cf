"""How writer tasks reach the coordinator: in-process (tests) or RPC (Spark)."""

from engine.stream.transport.base import CoordinatorClient, InstantGrant, poll_instant
from engine.stream.transport.local import LocalClient

__all__ = ["CoordinatorClient", "InstantGrant", "LocalClient", "poll_instant"]
