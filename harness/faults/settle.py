"""Faults a run still waits for after its duration.

A scenario places its faults in seconds, but what they must exercise is counted in
batches: five dropped ACKs need five batches, and the ACK that subsumes them a sixth; a
crash at a seam needs the batch that reaches it. On a loaded machine batches come slower
(a restarted driver's JVM alone can take longer than the whole run), so a run that ended
on the clock would judge a fault that had not yet done its work: `unknown` at best. The
run goes on until every fault scheduled inside it has had its effect, bounded by the
runner's settle limit, after which the checks say `unknown` as before.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from harness.faults.crash import missed, retried
from harness.faults.fired import FiredLog, ack_followed, ack_handled, cut_healed
from harness.faults.schedule import Occurrence
from harness.scenario.faults import CoordinatorCrash, DelayAck, DropAck, StaleAck, WriterCrash
from harness.scenario.network_faults import Partition


def unsettled(occurrences: Iterable[Occurrence[Any]], fired: FiredLog, run_s: float) -> list[str]:
    """Labels of the faults due inside the run whose effect has not happened yet: a
    coordinator crash whose seam was not reached, a writer crash not yet seen through
    (its worker exited but Spark's retry, which records it, has not run: a stream stopped
    now would cancel it), dropped ACKs not yet followed by a delivered one, delayed or
    replayed ACKs the coordinator has not handled yet (a driver stopped first cancels
    them), a partition pinned to a seam not yet healed (or not yet reached)."""
    waiting = []
    for o in occurrences:
        if o.at_s >= run_s:
            continue
        if isinstance(o.fault, DropAck):
            done = fired.fired(ack_followed(o.label))
        elif isinstance(o.fault, WriterCrash):
            # retried: recorded; missed: its batch ended without reaching the seam
            done = fired.fired(retried(o.label)) or fired.fired(missed(o.label))
        elif isinstance(o.fault, (DelayAck, StaleAck)):
            done = fired.all_taken(ack_handled(o.label), o.fault.count)
        elif isinstance(o.fault, CoordinatorCrash):
            done = fired.fired(o.label)
        elif isinstance(o.fault, Partition) and o.fault.point is not None:
            done = fired.fired(cut_healed(o.label))
        else:
            continue
        if not done:
            waiting.append(o.label)
    return waiting
