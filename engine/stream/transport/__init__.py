"""How writer tasks reach the coordinator: in-process (tests) or RPC (Spark)."""

from engine.stream.transport.base import CoordinatorClient, InstantGrant, poll_instant
from engine.stream.transport.local import LocalClient
from engine.stream.transport.rpc import (
    CoordinatorServer,
    Endpoint,
    RpcCoordinatorClient,
    RpcLeaseClient,
    rpc_lock,
)

__all__ = [
    "CoordinatorClient",
    "CoordinatorServer",
    "Endpoint",
    "InstantGrant",
    "LocalClient",
    "RpcCoordinatorClient",
    "RpcLeaseClient",
    "poll_instant",
    "rpc_lock",
]
