"""In-process transport: the writer calls the coordinator directly (tests, one process).

Events still go through their dict form, so anything that would not survive JSON over
RPC fails here too.
"""

from __future__ import annotations

import json

from engine.stream.coordinator import Coordinator
from engine.stream.transport.base import InstantGrant, poll_instant, raise_for_reply
from engine.stream.write_meta import WriteMetaEvent


class LocalClient:
    def __init__(self, coordinator: Coordinator, wait_s: float = 0.2) -> None:
        self.coordinator = coordinator
        self.wait_s = wait_s

    def request_instant(self, checkpoint_id: int, task_id: int, deadline_s: float) -> InstantGrant:
        return poll_instant(
            lambda: self.coordinator.request_instant(checkpoint_id, task_id, self.wait_s),
            checkpoint_id,
            deadline_s,
        )

    def send_event(self, event: WriteMetaEvent) -> None:
        wire = WriteMetaEvent.from_dict(json.loads(json.dumps(event.to_dict())))
        raise_for_reply(self.coordinator.handle_event(wire), "send_event")
