"""partition, link_latency and packet_loss on a run's hosts, applied by a thread of the
runner.

Each occurrence is put into the links at its `at_s` (a cut or a loss: the bridge's rules,
infra/hosts/links.py; a delay: delayers on the sending hosts, infra/hosts/delays.py) and
healed at its end (or when the run stops). A partition pinned to a seam (`point`) is cut
once the driver has reached the seam (it waits there), healed duration_s later, and its
heal marked for the driver to go on. It is recorded as applied only at the heal, and
only if the runner's probes saw both sides of it: the effect (no echo crossed the cut; the
echoes came back slower by at least the delay; the loss rules dropped packets) and, after
the heal, the link as it was (echoes again, at their old speed).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from harness.faults.evidence import record_fault
from harness.faults.fired import FiredLog, cut_healed, cut_reached
from harness.faults.schedule import Occurrence
from harness.history import HistoryWriter
from harness.run_clock import RunClock
from harness.scenario.network_faults import LinkLatency, NetworkFault, PacketLoss, Partition
from infra.hosts import HostNetwork
from infra.hosts.delays import LinkDelay
from infra.hosts.links import Pair, cut, dropped, heal
from infra.hosts.probe import Probe, probe

PROBE_ECHOES = 5
LOSS_PROBE_ECHOES = 20  # traffic enough for a loss rule to have something to drop


def partition_groups(fault: Partition, hosts: list[str]) -> list[list[str]]:
    if fault.groups is not None:
        return fault.groups
    assert fault.isolate is not None  # the model wants one of them
    return [[fault.isolate], [h for h in hosts if h != fault.isolate]]


def where(fault: NetworkFault) -> str:
    """What a fault's event names as its target: `driver | worker:1` (a partition's
    groups), `driver<->s3` (a link), or the host."""
    if isinstance(fault, Partition) and fault.isolate is not None:
        return f"{fault.isolate} | every other host"
    if isinstance(fault, Partition):
        return " | ".join(",".join(group) for group in fault.groups or [])
    return "<->".join(fault.link) if fault.link is not None else str(fault.target)


def fault_pairs(fault: NetworkFault, hosts: list[str]) -> list[Pair]:
    """Every (from, to) whose packets the fault drops (all, or some for a loss)."""
    if isinstance(fault, Partition):
        groups = partition_groups(fault, hosts)
        sources = groups[:1] if fault.one_way else groups
        return [
            (a, b)
            for i, group in enumerate(sources)
            for j, other in enumerate(groups)
            if i != j
            for a in group
            for b in other
        ]
    if fault.link is not None:
        a, b = fault.link
        return [(a, b), (b, a)]
    target = fault.target
    assert target is not None  # the model wants link or target
    others = [h for h in hosts if h != target]
    return [(target, h) for h in others] + [(h, target) for h in others]


@dataclass
class _Active:
    occurrence: Occurrence[Any]
    applied_s: float
    before: Probe
    during: Probe
    rules: list[str] = field(default_factory=list)
    delay: LinkDelay | None = None  # a link_latency's delayers

    @property
    def heal_at_s(self) -> float:
        """Its end: duration_s after the cut for one pinned to a seam, else its schedule's."""
        o = self.occurrence
        return self.applied_s + o.fault.duration_s if _pinned(o) else o.end_s


def _pinned(o: Occurrence[Any]) -> bool:
    return isinstance(o.fault, Partition) and o.fault.point is not None


def _rtt(p: Probe) -> float:
    return p.rtt_avg_ms if p.rtt_avg_ms is not None else float("inf")


def effect_seen(fault: NetworkFault, before: Probe, during: Probe, drops: int) -> bool:
    """A cut no echo crossed; a delay that slowed the round trip (twice the delay on
    average) by at least the delay; a loss whose rules dropped packets."""
    if isinstance(fault, Partition):
        return during.received == 0
    if isinstance(fault, LinkLatency):
        return during.received > 0 and _rtt(during) >= _rtt(before) + fault.delay_ms
    return drops > 0


def heal_seen(fault: NetworkFault, before: Probe, healed: Probe) -> bool:
    """Echoes across the link again (after a delay: faster than the delay again)."""
    if isinstance(fault, LinkLatency):
        return healed.received > 0 and _rtt(healed) < _rtt(before) + fault.delay_ms
    return healed.received > 0


class NetworkFaults:
    """The run's network faults on `network`, in a thread of their own: a probe takes up
    to a second or two, which the supervisor's 50-ms loop must not wait for."""

    def __init__(
        self,
        network: HostNetwork,
        occurrences: list[Occurrence[Any]],
        clock: RunClock,
        history: HistoryWriter,
        fired: FiredLog,
    ) -> None:
        self.network, self.clock, self.history, self.fired = network, clock, history, fired
        kinds = Partition | LinkLatency | PacketLoss
        self.faults = [o for o in occurrences if isinstance(o.fault, kinds)]
        self._active: list[_Active] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="network-faults", daemon=True)

    def start(self) -> None:
        if self.faults:
            self._thread.start()

    def stop(self) -> None:
        """Heal what is still in the links (and record it), then end the thread."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        for active in list(self._active):
            self._heal(active)
        # A driver held at a seam whose cut never began, or never came up, goes on too (a
        # healed cut is marked already: marking is once only).
        for o in self.faults:
            if _pinned(o):
                self.fired.mark(cut_healed(o.label))

    def unsettled(self) -> bool:
        """A fault still in the links: the run waits for its heal."""
        return bool(self._active)

    def _due(self, o: Occurrence[Any], now: float) -> bool:
        return o.at_s <= now and (not _pinned(o) or self.fired.fired(cut_reached(o.label)))

    def _loop(self) -> None:
        pending = sorted(self.faults, key=lambda o: o.at_s)
        while not self._stop.wait(0.05):
            now = self.clock.elapsed()
            for o in [o for o in pending if self._due(o, now)]:
                pending.remove(o)
                if self.fired.mark(o.label):
                    self._apply(o)
            for active in [a for a in self._active if a.heal_at_s <= now]:
                self._heal(active)
            if not pending and not self._active:
                return

    def _probe(self, o: Occurrence[Any], before: bool = False) -> Probe:
        """Echoes across the fault's first pair: a short probe before the fault (it is due),
        enough traffic during and after a loss for its rules to have something to drop,
        and time enough for a delayed echo to come back."""
        source, target = fault_pairs(o.fault, self.network.hosts)[0]
        lossy = isinstance(o.fault, PacketLoss) and not before
        slow = o.fault.delay_ms + o.fault.jitter_ms if isinstance(o.fault, LinkLatency) else 0
        return probe(
            self.network.namespace(source),
            source,
            target,
            self.network.address(target),
            count=LOSS_PROBE_ECHOES if lossy else PROBE_ECHOES,
            wait_s=1.0 + 2 * slow / 1000,
        )

    def _apply(self, o: Occurrence[Any]) -> None:
        before = self._probe(o, before=True)
        pairs = fault_pairs(o.fault, self.network.hosts)
        delay = None
        if isinstance(o.fault, LinkLatency):
            delay = LinkDelay(
                self.network, o.label, o.index, pairs, o.fault.delay_ms, o.fault.jitter_ms
            )
            rules = delay.start()
        else:
            loss = o.fault.percent if isinstance(o.fault, PacketLoss) else None
            rules = cut(self.network, o.label, pairs, loss)
        applied_s = self.clock.elapsed()
        self._active.append(_Active(o, applied_s, before, self._probe(o), rules, delay))

    def _heal(self, active: _Active) -> None:
        o = active.occurrence
        drops = None
        if active.delay is not None:
            active.delay.stop()
        else:
            drops = dropped(self.network, o.label)  # the counters go with the rules
            heal(self.network, o.label)
        healed_s = self.clock.elapsed()
        healed = self._probe(o)
        self._active.remove(active)
        seen = effect_seen(o.fault, active.before, active.during, drops or 0)
        if seen and heal_seen(o.fault, active.before, healed):  # else it stays unapplied
            record_fault(
                self.history,
                o,
                active.applied_s,
                target=where(o.fault),
                rules=active.rules,
                before=active.before.to_dict(),
                during=active.during.to_dict(),
                dropped=drops,
                healed=healed.to_dict(),
                healed_s=round(healed_s, 3),
            )
        if _pinned(o):
            self.fired.mark(cut_healed(o.label))  # the driver held at the seam goes on
