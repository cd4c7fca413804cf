"""The coordinator's commit seams, where a fault can be pinned (`point`): shared by the
driver's faults and the network faults that begin there."""

from typing import Literal

# mid_commit: under the table lock, before the epoch check; after_fencing_check: right
# after it (then the TrueTime wait and the completed instant's write, which fencing refuses).
CoordinatorPoint = Literal[
    "after_coordinator_snapshot",
    "after_ack_before_commit",
    "mid_commit",
    "after_fencing_check",
    "after_commit",
]
