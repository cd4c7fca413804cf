"""Which systems under test there are, and what each can do (their capabilities)."""

from __future__ import annotations

from harness.systems.capabilities import Capabilities
from harness.systems.delta.capabilities import DELTA
from harness.systems.hudi.capabilities import HUDI

_SYSTEMS = {caps.kind: caps for caps in (HUDI, DELTA)}


def capabilities_of(kind: str) -> Capabilities | None:
    """None for the project's own engine: every key, fault and check applies to it."""
    return _SYSTEMS.get(kind)
