"""Which systems under test there are, and what each can do (their capabilities)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from harness.systems.capabilities import Capabilities
from harness.systems.delta.capabilities import DELTA
from harness.systems.hudi.capabilities import HUDI
from harness.systems.iceberg.capabilities import ICEBERG

if TYPE_CHECKING:
    from harness.scenario.system import System
    from harness.systems.spark_stream.sink_system import SinkSystem

_SYSTEMS = {caps.kind: caps for caps in (HUDI, DELTA, ICEBERG)}


def capabilities_of(kind: str) -> Capabilities | None:
    """None for the project's own engine: every key, fault and check applies to it."""
    return _SYSTEMS.get(kind)


def sink_system(system: System) -> SinkSystem:
    """A table format's Spark sink (delta, iceberg) as the scenario's `system` sets it up:
    imported only when a run needs it."""
    if system.kind == "delta":
        from harness.systems.delta.system import DELTA_SINK

        return DELTA_SINK
    from harness.systems.iceberg.system import iceberg_sink

    return iceberg_sink(system.catalog)
