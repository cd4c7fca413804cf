"""Instants are minted in checkpoint order even when the driver's prefetch (made once an
ACK's commits are done) runs before the next batch asked for its own instant: the order
a batch that starts late used to get wrong (its instant minted after the later one's, so
in blocking mode the later committed first and OCC aborted a batch Spark had committed).
The prefetch asks only for the later checkpoint; the coordinator mints the earlier one
first (safety.checkpoint_ordered_instants)."""

from types import SimpleNamespace

import pytest
from stream_harness import StreamHarness

from harness.pipeline.engine_sink import EngineSink


@pytest.mark.parametrize("mode", ["async", "blocking"])
def test_a_prefetch_before_the_next_batch_asks_keeps_checkpoint_order(tmp_path, mode) -> None:
    h = StreamHarness(str(tmp_path), mode=mode)
    coordinator = h.coordinator
    try:
        # Checkpoint 0 (an empty first batch) completed; its ACK's commits are done and the
        # prefetch runs before batch 1 has asked for checkpoint 0's instant.
        ack = coordinator.notify_checkpoint_complete(0)
        assert ack.result(timeout=10) == []
        EngineSink._prefetch(SimpleNamespace(coordinator=coordinator), ack, 1)
        first = coordinator.request_instant(0, 0, 30.0)  # batch 1's writer, late
        assert first["status"] == "READY" and first["created"] is False  # made first
        second = coordinator.request_instant(1, -1, 0.5 if mode == "blocking" else 30.0)
        if mode == "blocking":  # checkpoint 1's instant waits for checkpoint 0's commit
            assert second["status"] == "PENDING", second
        else:
            assert second["status"] == "READY" and first["instant"] < second["instant"]
    finally:
        coordinator.close()
