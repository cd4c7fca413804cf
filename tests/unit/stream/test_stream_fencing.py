"""The coordinator's timeline writes carry its epoch (engine/stream/table_port.py): a zombie
coordinator cannot create an instant that its writers would then use, even though instant
creation has no epoch check of its own. With fencing off it can."""

import pytest
from stream_harness import StreamHarness

from engine.config import Safety


@pytest.mark.parametrize("fencing", [True, False])
def test_a_zombie_coordinator_creates_no_instant(tmp_path, fencing):
    h = StreamHarness(str(tmp_path), safety=Safety(fencing=fencing))
    h.run_batch()
    zombie = h.coordinator
    h.restart_coordinator(close_old=False)  # a successor took the epoch
    before = {i.requested_time for i in h.table.timeline.reload().instants()}
    answer = zombie.request_instant(0, wait_s=5.0)  # a writer of the old driver's batch 1
    created = {i.requested_time for i in h.table.timeline.reload().instants()} - before
    if fencing:
        assert answer["status"] == "ERROR" and "sealed" in answer["error"]
        assert created == set()
    else:
        assert answer["status"] == "READY" and created == {answer["instant"]}
    zombie.close()
